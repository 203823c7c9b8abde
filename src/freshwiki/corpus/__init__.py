"""The corpus layer: dumps and extracted text → revisions → clean text → passages; store."""
