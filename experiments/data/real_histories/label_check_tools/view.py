import json, sys, difflib, collections
from freshwiki.changes.edits.sources import iter_history
from freshwiki.changes.edits.paragraphs import ArticleView, SectionChange, text_digest, words
F='/work/wt-hf/experiments/data/real_histories/files/'
L=F+'labels/'
SRC={'enwiki_anarchism_2001_2010':'enwiki-anarchism-history.xml','frwiki_dbpedia_history_sample':'frwiki-dbpedia-history-sample.xml',
     'hiwiki_kahani':'hiwiki-kahani-history.xml','hiwiki_main_page_2003':'hiwiki-main-page-2003-history.xml'}
samp=collections.defaultdict(dict)
for line in open('sample.tsv'):
    if line.startswith('#'): continue
    s,r,l=line.split('\t'); samp[s][int(r)]=None
for s in samp:
    for line in open(L+s+'/labelled.jsonl'):
        x=json.loads(line)
        if x['revision_id'] in samp[s]: samp[s][x['revision_id']]=x
cache={}
def view(rev):
    d=text_digest(rev.text)
    if d not in cache:
        if len(cache)>400: cache.clear()
        cache[d]=ArticleView.of(rev)
    return cache[d]
def who(rev):
    c=rev.contributor
    if not c: return '?'
    return c.username or ('IP:'+str(c.ip))
def short(s,n=160):
    s=s.replace('\n',' / ')
    return s if len(s)<=n else s[:n]+'…'
out=open(sys.argv[2],'w')
blank=open(sys.argv[2]+'.blank','w')
s=sys.argv[1]
want=samp[s]
active=[]
prev=None; digs=[]  # all digests in stream order with ids
for rev in iter_history([F+SRC[s]]):
    d=text_digest(rev.text)
    digs.append((rev.id,d,len(rev.text),who(rev),rev.comment or '',str(rev.timestamp)[:16]))
    for w in list(active):
        w['k']+=1
        v=view(rev)
        sec=v.section(w['path'])
        st=' / '.join(sec)
        allt=' '.join(p for ps in v.sections.values() for p in ps)
        pa=[p for p in w['pa']]
        pin=sum(1 for p in pa if p in sec)
        add=[a for a in w['add'] if a]; dele=[a for a in w['del'] if a]
        ain=sum(1 for a in add if a in allt); din=sum(1 for a in dele if a in allt)
        und=w['chg'].undone_by(v.section_words(w['path']))
        flags=[]
        if rev.text=='': flags.append('EMPTY')
        if d==w['pd']: flags.append('=PARENT')
        if d==w['ed']: flags.append('=EDIT')
        if d==w['last']: flags.append('null')
        if w['path'] not in v.sections: flags.append('NOSECTION')
        out.write(f"  +{w['k']:>2} {rev.id} {str(rev.timestamp)[:16]} {who(rev)[:22]:22} P {pin}/{len(pa)} A {ain}/{len(add)} D {din}/{len(dele)} und {und:.2f} {' '.join(flags)} | {short(rev.comment or '',90)}\n") if False else None
        w['lines'].append(f"  +{w['k']:>2} {rev.id} {str(rev.timestamp)[:16]} {who(rev)[:22]:22} P {pin}/{len(pa)} A {ain}/{len(add)} D {din}/{len(dele)} und {und:.2f} {' '.join(flags)}{' <-LABELLER_REVERT' if rev.id==w['rr'] else ''} | {short(rev.comment or '',90)}")
        if rev.text!='' and sec!=w['lastsec'] and w['lastsec'] is not None:
            dl=[]
            for tag,i1,i2,j1,j2 in difflib.SequenceMatcher(None,w['lastsec'],sec,autojunk=False).get_opcodes():
                if tag!='equal':
                    dl.append('      - '+short(' / '.join(w['lastsec'][i1:i2]),300)); dl.append('      + '+short(' / '.join(sec[j1:j2]),300))
            w['lines'].extend(dl[:4])
        if rev.text!='': w['lastsec']=sec
        w['last']=d
        if w['k']>=w['W']:
            active.remove(w); out.write('\n'.join(w['lines'])+'\n\n'); out.flush()
    if rev.id in want:
        x=want[rev.id]
        pv=view(prev); ev=view(rev); path=tuple(x['section_path'])
        w=dict(k=0,W=x['later_edits_required']+6,path=path,pd=text_digest(prev.text),ed=d,last=d,
               pa=[p for p in x['paragraph_after'].split('\n\n') if p.strip()] if False else list(ev.section(path)) and [p for p in ev.section(path) if p in x['paragraph_after']],
               add=[p for f in x['added_text'].split(' … ') for p in f.split('\n')],del_=None,chg=SectionChange.between(pv.section_words(path),ev.section_words(path)),lastsec=ev.section(path),lines=[],rr=x['reverting_revision_id'])
        w['del']=[p for f in x['deleted_text'].split(' … ') for p in f.split('\n')]
        hdr=[f"=== {s} {rev.id} label={x['label']} N={x['later_edits_required']} parent={x['parent_id']} (stream prev {prev.id}) {str(rev.timestamp)[:16]} {who(rev)} [{x['user_type']}] sec={x['section']!r} kind={x['kind']}",
             f"  comment: {short(x['comment'] or '',200)}",
             f"  labeller: reverting={x['reverting_revision_id']} undo={x['undo_fraction']} signals={x['signals']} decided_at={x['decided_at']}",
             f"  DEL: {short(x['deleted_text'],600)}", f"  ADD: {short(x['added_text'],600)}"]
        w['lines']=hdr
        active.append(w)
    prev=rev
for w in active: out.write('\n'.join(w['lines'])+'\n  (history ended)\n\n')
json.dump(digs,blank)
