/* report/page.js — the report page's script, embedded in the page at build time
 * (cmake/embed.cmake; report/html.c writes it into the page's script element): the
 * table sort, the hover, the legend toggles and the #selftest; then the
 * views of a trace (active memory, zoom and pan, the address space).  Texts from
 * the page reach the hover through textContent only. */
(function(){
'use strict';
/* ---- what both parts below share ---- */
var U=['KiB','MiB','GiB','TiB','PiB','EiB'];
/* Bytes as gmsim writes them (gm_format_size): 512 B, 1.50 GiB; ties to even, as printf. */
function size(b){
if(b<1024)return b+' B';
var u=0,v=b/1024;
while(u+1<U.length&&v>=1023.995){v/=1024;u++;}
var c=v*100,r=Math.round(c);
if(r-c===0.5&&r%2)r--;
return (r/100).toFixed(2)+' '+U[u];
}
/* Show the tooltip tip by the pointer of ev, kept inside the window. */
function place(tip,ev){
tip.style.display='block';
var x=ev.clientX+14,y=ev.clientY+14,w=tip.offsetWidth,h=tip.offsetHeight;
if(x+w>innerWidth-4)x=Math.max(4,ev.clientX-14-w);
if(y+h>innerHeight-4)y=Math.max(4,ev.clientY-14-h);
tip.style.left=x+'px';tip.style.top=y+'px';
}
/* Tables: a click on a header sorts by that column (data-v, else the text). */
document.querySelectorAll('table.sortable th').forEach(function(th){
th.addEventListener('click',function(){var t=th.closest('table'),i=th.cellIndex,
b=t.tBodies[0],rows=Array.prototype.slice.call(b.rows),asc=th.dataset.dir!=='asc';
th.dataset.dir=asc?'asc':'desc';rows.sort(function(a,c){var x=a.cells[i],y=c.cells[i];
var p=x.dataset.v!==undefined?parseFloat(x.dataset.v):x.textContent,
q=y.dataset.v!==undefined?parseFloat(y.dataset.v):y.textContent;
return (p<q?-1:p>q?1:0)*(asc?1:-1);});rows.forEach(function(r){b.appendChild(r);});});});
(function(){
'use strict';
function fmt(u,v){return u==='%'?(v*100).toFixed(1)+'%':size(v);}
/* A list attribute's numbers; a series' data-v is delta-coded in units of its data-q. */
function nums(el,a){
var k='_'+a;if(el[k])return el[k];
var v=(el.getAttribute(a)||'').split(' ').map(Number),q=el.getAttribute('data-q');
if(a==='data-v'&&q){q=+q;for(var i=0,s=0;i<v.length;i++){s+=v[i];v[i]=s*q;}}
return (el[k]=v);
}
var tip=document.createElement('div');
tip.className='tip';tip.setAttribute('role','tooltip');document.body.appendChild(tip);
function line(cls,color,name,value,key){
var d=document.createElement('div');d.className=cls;if(key)d.setAttribute('data-s',key);
if(color){var s=document.createElement('span');s.className='sw';s.style.background=color;d.appendChild(s);}
var n=document.createElement('span');n.textContent=name;d.appendChild(n);
if(value!==undefined){var b=document.createElement('b');b.textContent=value;d.appendChild(b);}
tip.appendChild(d);
}
function hide(){tip.style.display='none';}
/* Line charts: the point of each visible series nearest the pointer in x. */
function lineHover(svg,ev){
var m=svg.getScreenCTM();if(!m)return;
var p=svg.createSVGPoint();p.x=ev.clientX;p.y=ev.clientY;p=p.matrixTransform(m.inverse());
/* a zoomed chart: its series are stretched by x*zk+zb (the views below) */
var zk=svg._k||1,zb=svg._b||0;p.x=(p.x-zb)/zk;
var ns=svg.namespaceURI,g=svg.querySelector('g.hov');
if(!g){g=document.createElementNS(ns,'g');g.setAttribute('class','hov');svg.appendChild(g);}
while(g.firstChild)g.removeChild(g.firstChild);
tip.textContent='';
var head=null,at=0,rows=[],u=svg.getAttribute('data-u'),all=svg.querySelectorAll('polyline.sr');
for(var i=0;i<all.length;i++){
var pl=all[i];if(pl.classList.contains('hid'))continue;
var pts=pl.points,n=pts.numberOfItems;if(!n)continue;
var lo=0,hi=n-1;
while(lo<hi){var mid=(lo+hi)>>1;if(pts.getItem(mid).x<p.x)lo=mid+1;else hi=mid;}
if(lo>0&&p.x-pts.getItem(lo-1).x<=pts.getItem(lo).x-p.x)lo--;
var q=pts.getItem(lo),ev_=pl._ze||(pl.hasAttribute('data-e')?nums(pl,'data-e'):nums(svg,'data-e'));
if(head===null){
head=svg.getAttribute('data-xn')+' '+ev_[lo];at=ev_[lo];
var x=document.createElementNS(ns,'line');
x.setAttribute('x1',q.x*zk+zb);x.setAttribute('x2',q.x*zk+zb);x.setAttribute('y1',0);x.setAttribute('y2',svg.viewBox.baseVal.height);
x.setAttribute('class','cross');g.appendChild(x);
}
var c=document.createElementNS(ns,'circle');
c.setAttribute('cx',q.x*zk+zb);c.setAttribute('cy',q.y);c.setAttribute('r',3.5);c.setAttribute('fill',pl.getAttribute('stroke'));
g.appendChild(c);
rows.push([(pl._zv||nums(pl,'data-v'))[lo],pl]);
}
if(head===null){hide();return;}
/* Highest first, as the lines lie on the chart. */
rows.sort(function(a,b){return b[0]-a[0];});
rows.forEach(function(r){line('tr',r[1].getAttribute('stroke'),r[1].getAttribute('data-n'),fmt(u,r[0]),r[1].getAttribute('data-s'));});
/* The last mark at or before the point: where in the step it is. */
var mk=svg.querySelectorAll('.marks path[data-e]'),last=null,le=-1;
for(var k=0;k<mk.length;k++){var es=nums(mk[k],'data-e');for(var j=0;j<es.length&&es[j]<=at;j++)if(es[j]>le){le=es[j];last=mk[k];}}
var h=document.createElement('div');h.className='th';
h.textContent=head+(last?' · after '+last.getAttribute('data-n')+' (event '+le+')':'');
tip.insertBefore(h,tip.firstChild);
place(tip,ev);
}
document.querySelectorAll('svg.ln').forEach(function(svg){
svg.addEventListener('mousemove',function(ev){lineHover(svg,ev);});
svg.addEventListener('mouseleave',function(){hide();var g=svg.querySelector('g.hov');if(g)g.textContent='';});
});
/* Bars, waste segments, heat map cells, site sizes: their own value. */
function valued(t){return t&&t.closest?t.closest('[data-n][data-v]:not(polyline)'):null;}
document.addEventListener('mouseover',function(ev){
var t=valued(ev.target);if(!t)return;
tip.textContent='';
line('th',null,t.getAttribute('data-n'));
line('tr',null,'',size(+t.getAttribute('data-v')));
if(t.getAttribute('data-d'))line('dd',null,t.getAttribute('data-d'));
place(tip,ev);
});
document.addEventListener('mouseout',function(ev){if(valued(ev.target))hide();});
/* Legend: an entry hides or shows every element of its figure with its key. */
function toggle(lg){
var fig=lg.closest('figure');if(!fig)return;
var off=lg.classList.toggle('off'),keys={};
lg.setAttribute('aria-pressed',off?'false':'true');
fig.querySelectorAll('.lg.off').forEach(function(l){keys[l.getAttribute('data-s')]=1;});
fig.querySelectorAll('svg [data-s]').forEach(function(el){
el.classList.toggle('hid',el.getAttribute('data-s').split(' ').some(function(k){return keys[k];}));
});
}
document.querySelectorAll('.lg[data-s]').forEach(function(lg){
lg.addEventListener('click',function(){toggle(lg);});
lg.addEventListener('keydown',function(e){if(e.key==='Enter'||e.key===' '){e.preventDefault();toggle(lg);}});
});
/* #selftest: drive the handlers above with real events and write what the
 * page shows into a pre element, id selftest (tests/test_report.c reads it). */
function selftest(){
var out=[];function put(k,v){out.push(k+'='+v);}
try{
var fig=document.querySelector('#memory-over-time figure'),svg=fig.querySelector('svg.ln');
var lg=fig.querySelector('.lg[data-s="r0"]'),pl=svg.querySelector('polyline[data-s="r0"]');
var al=svg.querySelector('polyline[data-s="r0 al"]'),v=nums(pl,'data-v'),i=0;
for(var k=1;k<v.length;k++)if(v[k]>v[i])i=k;
var q=pl.points.getItem(i),pt=svg.createSVGPoint();
pt.x=q.x;pt.y=q.y;pt=pt.matrixTransform(svg.getScreenCTM());
function move(){svg.dispatchEvent(new MouseEvent('mousemove',{bubbles:true,clientX:pt.x,clientY:pt.y}));}
move();
var r=tip.querySelector('[data-s="r0"] b');
put('series',pl.getAttribute('data-n'));put('value',v[i]);put('tip',r?r.textContent:'');
put('tip-display',getComputedStyle(tip).display);
lg.dispatchEvent(new MouseEvent('click',{bubbles:true}));
put('hidden',getComputedStyle(pl).display);put('hidden-allocated',getComputedStyle(al).display);
put('legend-pressed',lg.getAttribute('aria-pressed'));
move();put('tip-after-hide',tip.querySelector('[data-s="r0"]')?'present':'absent');
lg.dispatchEvent(new MouseEvent('click',{bubbles:true}));
put('shown',getComputedStyle(pl).display);
var bar=document.querySelector('#peak-reserved svg rect[data-v]');
bar.dispatchEvent(new MouseEvent('mouseover',{bubbles:true,clientX:20,clientY:20}));
put('bar',bar.getAttribute('data-n'));put('bar-tip',(tip.querySelector('b')||{}).textContent);
bar.dispatchEvent(new MouseEvent('mouseout',{bubbles:true}));
put('bar-tip-after-out',getComputedStyle(tip).display);
}catch(e){put('error',e);}
var pre=document.createElement('pre');pre.id='selftest';pre.textContent=out.join('\n');
document.body.appendChild(pre);
}
if(location.hash==='#selftest')selftest();
})();
/* ---- views of a trace: active memory, zoom and pan, the address space ----
 * Each trace (data-t: the index of its first group) has one window of
 * events [t0,t1) that all its views show: the active-memory canvas and its
 * overview strip, and every memory-over-time chart of the trace (g.zx is
 * stretched to the window; g.xj gets the axis labels).  window.gmsim gives
 * the tests (tests/report_browser.py) read access to the state. */
(function(){
'use strict';
function count(v){return v<10000?String(Math.round(v)):v<1e6?(v/1e3).toFixed(v%1000?1:0)+'k':(v/1e6).toFixed(v%1e6?1:0)+'M';}
function nice(v){if(v<=0)return 1;var p=Math.pow(10,Math.floor(Math.log10(v))),m=v/p;return (m<=1?1:m<=2?2:m<=5?5:10)*p;}
function usec(v){return v<1000?v+' µs':v<1e6?(v/1e3).toFixed(2)+' ms':(v/1e6).toFixed(3)+' s';}
var traces={};
window.gmsim={traces:traces,errors:[]};
/* ---- decoding ---- */
function b64(s){
var bin=atob(s.replace(/\s+/g,'')),n=bin.length,out=new Uint8Array(n);
for(var i=0;i<n;i++)out[i]=bin.charCodeAt(i);
return out;
}
function decode(el){
var n=+el.getAttribute('data-n'),N=+el.getAttribute('data-events'),q=+el.getAttribute('data-q');
var timed=el.getAttribute('data-timed')==='1',buf=b64(el.textContent),p=0;
function vi(){var v=0,m=1,c;do{c=buf[p++];v+=(c&127)*m;m*=128;}while(c&128);return v;}
var T={n:n,N:N,full:+el.getAttribute('data-full')||N,start:new Float64Array(n),end:new Float64Array(n),size:new Float64Array(n),
stack:new Int32Array(n),stream:new Int32Array(n),ts0:timed?new Float64Array(n):null,ts1:timed?new Float64Array(n):null};
var s=0,ts=0;
for(var i=0;i<n;i++){
s+=vi();T.start[i]=s;T.end[i]=s+vi();T.size[i]=vi()*q;T.stack[i]=vi();T.stream[i]=vi();
if(timed){ts+=vi();T.ts0[i]=ts;T.ts1[i]=ts+vi();}
}
/* Per event: the allocation it makes (id+1) or frees (-(id+1)); the live bytes after it. */
var ev=new Int32Array(N+1),tot=new Float64Array(N+1);
for(i=0;i<n;i++){if(T.start[i]<N)ev[T.start[i]]=i+1;if(T.end[i]<N)ev[T.end[i]]=-(i+1);}
var cur=0,peak=0;
for(var e=0;e<N;e++){var x=ev[e];if(x>0)cur+=T.size[x-1];else if(x<0)cur-=T.size[-x-1];tot[e]=cur;if(cur>peak)peak=cur;}
T.ev=ev;T.tot=tot;T.peak=peak||1;
return T;
}
/* ---- the band renderer: per pixel column, the live allocations stacked
 * in the order they were made; each pixel row belongs to the allocation
 * under its centre (so bands under a pixel merge into their neighbours). ---- */
var PAL=[[31,119,180],[255,127,14],[44,160,44],[214,39,40],[148,103,189],[140,86,75],[227,119,194],
[127,127,127],[188,189,34],[23,190,207],[57,59,121],[99,121,57],[140,109,49],[132,60,57],[123,65,115],[49,130,189]];
function colorOf(T,id){var k=T.stack[id]?T.stack[id]*7+3:id;var c=PAL[k%PAL.length];return 0xff000000|(c[2]<<16)|(c[1]<<8)|c[0];}
var ML=80,MB=22;
function render(V){
var T=V.T,cv=V.canvas,W=cv.clientWidth|0,H=cv.height;
if(W<ML+20)return;
cv.width=W;
var ctx=cv.getContext('2d'),PW=W-ML,PH=H-MB;
ctx.fillStyle='#fcfcfc';ctx.fillRect(0,0,W,H);
var img=ctx.createImageData(PW,PH),px=new Uint32Array(img.data.buffer);
var owner=new Int32Array(PW*PH).fill(-1);
var t0=V.w[0],t1=V.w[1],N=T.N,ev=T.ev,tot=T.tot,bpp=T.peak*1.05/PH,n=T.n,size_=T.size;
/* the live bytes by allocation id in a Fenwick tree: the band under a
 * pixel row is found in log n steps, whatever the number live */
var fw=new Float64Array(n+1),top=1,e=0;while(top*2<=n)top*=2;
function add(i,v){for(i++;i<=n;i+=i&-i)fw[i]+=v;}
function step(upto){for(;e<upto&&e<N;e++){var x=ev[e];if(x>0)add(x-1,size_[x-1]);else if(x<0)add(-x-1,-size_[-x-1]);}}
step(Math.floor(t0));
for(var c=0;c<PW;c++){
var a=t0+(t1-t0)*c/PW,b=t0+(t1-t0)*(c+1)/PW,ea=Math.floor(a),eb=Math.max(ea+1,Math.floor(b));
/* the event of the column with the most live bytes: its state is drawn */
var best=ea,bv=-1;for(var k=ea;k<eb&&k<N;k++)if(tot[k]>bv){bv=tot[k];best=k;}
step(best+1);
var total=best<N?tot[best]:0,row=0;
while(row<PH){
var target=(row+0.5)*bpp;if(target>=total)break;
var pos=0,rem=target;
for(var st=top;st>0;st>>=1)if(pos+st<=n&&fw[pos+st]<=rem){pos+=st;rem-=fw[pos];}
if(pos>=n)break;
var id=pos,end=target-rem+size_[id],col=id===V.pin?0xff00d7ff:colorOf(T,id);
while(row<PH&&(row+0.5)*bpp<end){var y=PH-1-row;px[y*PW+c]=col;owner[y*PW+c]=id;row++;}
}
step(eb);
}
ctx.putImageData(img,ML,0);
/* events past those embedded (a page's budget spent): shaded, named */
if(T.N<t1){var xe=ML+Math.max(0,(T.N-t0)/(t1-t0))*PW;ctx.fillStyle='#eceff2';ctx.fillRect(xe,0,ML+PW-xe,PH);
ctx.fillStyle='#777';ctx.font='11px system-ui,sans-serif';ctx.textAlign='left';if(ML+PW-xe>90)ctx.fillText('not embedded',xe+6,14);}
V.owner=owner;V.PW=PW;V.PH=PH;V.bpp=bpp;
/* axes */
ctx.fillStyle='#555';ctx.font='11px system-ui,sans-serif';ctx.textAlign='right';
/* a step of 1, 2 or 5 times a power of ten in the unit; 1000 MiB is 1 GiB */
var un=1;while(un*1024<=T.peak/4)un*=1024;var ym=nice(T.peak/4/un);if(ym>=1000){ym=1;un*=1024;}var ys=ym*un;
for(var v=0;v<=T.peak*1.05;v+=ys){var yy=PH-v/bpp;ctx.fillText(size(v),ML-4,Math.max(10,yy+4));ctx.fillRect(ML-3,yy,3,1);}
ctx.textAlign='center';
var xs=nice((t1-t0)/8);
for(var t=Math.ceil(t0/xs)*xs;t<=t1;t+=xs){var xx=ML+(t-t0)/(t1-t0)*PW;ctx.fillRect(xx,PH,1,4);ctx.fillText(count(t),Math.min(W-14,xx),PH+15);}
V.xlabels=[];for(t=Math.ceil(t0/xs)*xs;t<=t1;t+=xs)V.xlabels.push(t);
}
function overview(V){
var T=V.T,cv=V.ov,W=cv.clientWidth|0,H=cv.height;
if(W<ML+20)return;
cv.width=W;
var ctx=cv.getContext('2d'),PW=W-ML,N=V.N;
ctx.fillStyle='#fff';ctx.fillRect(0,0,W,H);
if(!V.ovmax||V.ovmax.length!==PW){
V.ovmax=new Float64Array(PW);
for(var c=0;c<PW;c++){var a=Math.floor(N*c/PW),b=Math.max(a+1,Math.floor(N*(c+1)/PW)),m=0;for(var k=a;k<b&&k<T.N;k++)if(T.tot[k]>m)m=T.tot[k];V.ovmax[c]=m;}
}
ctx.fillStyle='#9aa9b8';
for(c=0;c<PW;c++){var h=V.ovmax[c]/T.peak*(H-4);ctx.fillRect(ML+c,H-h,1,h);}
var x0=ML+V.w[0]/N*PW,x1=ML+V.w[1]/N*PW;
ctx.fillStyle='rgba(31,95,168,0.18)';ctx.fillRect(x0,0,Math.max(2,x1-x0),H);
ctx.strokeStyle='#1f5fa8';ctx.strokeRect(x0+0.5,0.5,Math.max(2,x1-x0)-1,H-1);
ctx.fillStyle='#555';ctx.font='10px system-ui,sans-serif';ctx.textAlign='right';ctx.fillText('whole trace',ML-4,H/2+4);
}
/* ---- the memory-over-time charts of a trace follow its window ---- */
/* A zoomed series redrawn from its finer level (data-fv, data-fe: every
 * point of the stored timeline, report/svg.c) over the window, one point
 * beyond it each side; the hover reads its values (_zv, _ze). */
function fine(pl){
if(pl._fe)return;
var v=pl.getAttribute('data-fv').split(' ').map(Number),e=pl.getAttribute('data-fe').split(' ').map(Number),q=+pl.getAttribute('data-fq');
for(var i=0,s=0,t=0;i<v.length;i++){s+=v[i];v[i]=s*q;t+=e[i];e[i]=t;}
pl._fv=v;pl._fe=e;pl._pts=pl.getAttribute('points');
}
function detail(svg,w,full){
var n=+svg.getAttribute('data-n')||1,ml=+svg.getAttribute('data-ml'),pw=+svg.getAttribute('data-pw'),y=(svg.getAttribute('data-y')||'').split(' ').map(Number);
svg.querySelectorAll('polyline.sr[data-fv]').forEach(function(pl){
fine(pl);
if(full){pl.setAttribute('points',pl._pts);pl._zv=pl._ze=null;return;}
var e=pl._fe,v=pl._fv,lo=0,hi=e.length-1;
while(lo<hi&&e[lo+1]<w[0])lo++;
while(hi>lo&&e[hi-1]>w[1])hi--;
var pts=[];for(var i=lo;i<=hi;i++)pts.push((ml+e[i]/n*pw).toFixed(3)+','+(y[0]-v[i]*y[1]).toFixed(2));
pl.setAttribute('points',pts.join(' '));pl._zv=v.slice(lo,hi+1);pl._ze=e.slice(lo,hi+1);
});
}
function zoomSvg(svg,w){
var n=+svg.getAttribute('data-n')||1,ml=+svg.getAttribute('data-ml'),pw=+svg.getAttribute('data-pw');
var zx=svg.querySelector('g.zx'),xj=svg.querySelector('g.xj');
if(!zx)return;
var full=w[0]<=0&&w[1]>=n,k=n/(w[1]-w[0]),b=ml-k*(ml+w[0]/n*pw);
svg._k=full?1:k;svg._b=full?0:b;
if(full){zx.removeAttribute('transform');svg.classList.remove('zoomed');}
else{zx.setAttribute('transform','matrix('+k+' 0 0 1 '+b+' 0)');svg.classList.add('zoomed');}
if(svg.hasAttribute('data-y'))detail(svg,w,full);
while(xj.firstChild)xj.removeChild(xj.firstChild);
var ns=svg.namespaceURI,y0=svg.viewBox.baseVal.height-36;
/* points drawn outside the stretched group (a seq_len chart's dots) move with it */
svg.querySelectorAll('.zp [data-x]').forEach(function(c){var x=+c.getAttribute('data-x')*svg._k+svg._b;c.setAttribute('cx',x);c.style.visibility=x<ml-0.5||x>ml+pw+0.5?'hidden':'';});
if(full)return;
if(svg.classList.contains('cat')){
/* a categorical axis: its own labels, where the window puts them */
zx.querySelectorAll('text.ax').forEach(function(o){var x=+o.getAttribute('x')*k+b;if(x<ml-0.5||x>ml+pw+0.5)return;
var tx=document.createElementNS(ns,'text');tx.setAttribute('x',x.toFixed(1));tx.setAttribute('y',o.getAttribute('y'));tx.setAttribute('class','ax');tx.setAttribute('text-anchor','middle');tx.textContent=o.textContent;xj.appendChild(tx);});
return;
}
var xs=nice((w[1]-w[0])/8);
for(var t=Math.ceil(w[0]/xs)*xs;t<=w[1];t+=xs){
var x=ml+(t-w[0])/(w[1]-w[0])*pw,tx=document.createElementNS(ns,'text');
tx.setAttribute('x',x.toFixed(1));tx.setAttribute('y',y0+14);tx.setAttribute('class','ax');tx.setAttribute('text-anchor','middle');
tx.textContent=count(t);xj.appendChild(tx);
}
}
function setWindow(t,a,b){
var V=traces[t];if(!V)return;
var N=V.N,span=Math.max(4,b-a);
if(span>=N){a=0;b=N;}else{if(a<0)a=0;if(a+span>N)a=N-span;b=a+span;}
V.w=[a,b];
if(V.canvas){render(V);overview(V);}
document.querySelectorAll('svg.ln[data-t="'+t+'"]').forEach(function(s){zoomSvg(s,V.w);});
}
/* ---- hover, pin ---- */
var tip=document.createElement('div');tip.className='tip amtip';tip.setAttribute('role','tooltip');document.body.appendChild(tip);
function describe(V,id,into){
var T=V.T,S=V.S;
while(into.firstChild)into.removeChild(into.firstChild);
function add(cls,text){var d=document.createElement('div');d.className=cls;d.textContent=text;into.appendChild(d);return d;}
add('th',size(T.size[id])+' · allocation '+id);
var end=T.end[id]>=T.full?'not freed':'freed at event '+T.end[id];
add('tr','lifetime: event '+T.start[id]+' → '+end+' ('+count(T.end[id]-T.start[id])+' events'+
(T.ts0&&T.end[id]<T.full?', '+usec(T.ts1[id]-T.ts0[id]):'')+')');
add('tr','stream '+(S.streams[T.stream[id]]!==undefined?S.streams[T.stream[id]]:T.stream[id]));
var st=T.stack[id]?S.stacks[T.stack[id]-1]:null;
if(!st){add('dd','(no frames recorded)');return;}
add('site',S.frames[st[0]]);
var pre=document.createElement('pre');pre.className='frames';
pre.textContent=st.slice(1).map(function(f){return S.frames[f];}).join('\n');
into.appendChild(pre);
}
function at(V,ev){
var r=V.canvas.getBoundingClientRect(),x=Math.floor(ev.clientX-r.left)-ML,y=Math.floor(ev.clientY-r.top);
if(x<0||y<0||x>=V.PW||y>=V.PH||!V.owner)return -1;
return V.owner[y*V.PW+x];
}
function pin(V,id){
V.pin=id;render(V);
describe(V,id,V.pinbox);V.pinbox.classList.add('pinned');
document.querySelectorAll('.as[data-t="'+V.t+'"]').forEach(function(el){if(el._pin)el._pin(id);});
}
/* ---- interaction: wheel zooms, drag pans, the strip brushes, double-click resets ---- */
function interact(el,t,plotLeft,plotWidth){
function frac(ev){var r=el.getBoundingClientRect(),L=plotLeft(r),P=plotWidth(r);return Math.min(1,Math.max(0,(ev.clientX-r.left-L)/P));}
el.addEventListener('wheel',function(ev){
var V=traces[t];ev.preventDefault();
var f=frac(ev),c=V.w[0]+f*(V.w[1]-V.w[0]),z=ev.deltaY<0?0.8:1.25,span=(V.w[1]-V.w[0])*z;
setWindow(t,c-f*span,c-f*span+span);
},{passive:false});
var drag=null;
el.addEventListener('mousedown',function(ev){if(ev.button===0){drag={x:ev.clientX,w:traces[t].w.slice(),moved:false};ev.preventDefault();}});
window.addEventListener('mousemove',function(ev){
if(!drag)return;
var r=el.getBoundingClientRect(),dx=ev.clientX-drag.x;if(Math.abs(dx)>2)drag.moved=true;
if(!drag.moved)return;
var span=drag.w[1]-drag.w[0],d=-dx/plotWidth(r)*span;
setWindow(t,drag.w[0]+d,drag.w[0]+d+span);
});
window.addEventListener('mouseup',function(ev){
if(!drag)return;var moved=drag.moved;drag=null;
if(!moved&&el._click)el._click(ev);
});
el.addEventListener('dblclick',function(){setWindow(t,0,traces[t].N);});
}
function brush(V){
var cv=V.ov,b=null;
function ev2t(ev){var r=cv.getBoundingClientRect();return Math.min(1,Math.max(0,(ev.clientX-r.left-ML)/(r.width-ML)))*V.N;}
cv.addEventListener('mousedown',function(ev){b=ev2t(ev);ev.preventDefault();});
window.addEventListener('mouseup',function(ev){
if(b===null)return;var a=b,c=ev2t(ev);b=null;
if(Math.abs(c-a)<V.N/500){var span=V.w[1]-V.w[0];setWindow(V.t,c-span/2,c+span/2);}
else setWindow(V.t,Math.min(a,c),Math.max(a,c));
});
cv.addEventListener('dblclick',function(){setWindow(V.t,0,V.N);});
}
function init(){
document.querySelectorAll('script.amd').forEach(function(el){
var t=el.getAttribute('data-t'),fig=document.getElementById('am'+t);
var sj=document.querySelector('script.ams[data-t="'+t+'"]');
var T=decode(el),S=JSON.parse(sj.textContent);
var V={t:t,T:T,S:S,N:T.full,w:[0,T.full],pin:-1,canvas:fig.querySelector('canvas.amc'),ov:fig.querySelector('canvas.amo'),pinbox:fig.querySelector('.pin')};
traces[t]=V;
render(V);overview(V);
var cv=V.canvas;
cv.addEventListener('mousemove',function(ev){
var id=at(V,ev);if(id<0){tip.style.display='none';return;}
if(tip._id!==id){describe(V,id,tip);tip._id=id;}
place(tip,ev);
});
cv.addEventListener('mouseleave',function(){tip.style.display='none';tip._id=-1;});
cv._click=function(ev){var id=at(V,ev);if(id>=0)pin(V,id);};
interact(cv,t,function(){return ML;},function(r){return r.width-ML;});
brush(V);
});
/* memory-over-time charts: zoom and pan them too (a trace without
 * active-memory data zooms its charts alone) */
document.querySelectorAll('svg.ln[data-t]').forEach(function(svg){
var t=svg.getAttribute('data-t'),n=+svg.getAttribute('data-n');
if(!traces[t])traces[t]={t:t,N:n,w:[0,n]};
var vb=svg.viewBox.baseVal;
interact(svg,t,function(r){return +svg.getAttribute('data-ml')*r.width/vb.width;},function(r){return +svg.getAttribute('data-pw')*r.width/vb.width;});
});
addEventListener('resize',function(){for(var t in traces)if(traces[t].canvas){render(traces[t]);overview(traces[t]);}});
}
/* ---- the address space: segments and blocks per policy (report/space.c) ---- */
var WHY=[['live','#9aa9b8'],['free','#9fd49f'],['too small','#d64545'],['another stream','#8e6bbf'],
['another pool','#17becf'],['rounding: big enough for the bytes asked, not for the rounded size','#f2a541'],
['big enough, not split (split limit or the policy\'s choice)','#e377c2'],['rest of the new segment','#d9ead3']];
var spaces={};window.gmsim.spaces=spaces;
function spaceSnap(A,k){return A.mode==='peak'?(A.peaks[k]||{}).snap:A.snaps[k];}
/* Any instant (report/space.c, "any instant"): each run's block of every
 * allocation, decoded once in the order of the trace's events, and its
 * segments' [create,release) events. */
function anyDecode(A,k){
var D=A.D,X=D.any&&D.any[k],V=traces[A.t];
if(!X||!V||!V.T)return null;
if(X._addr)return X;
var T=V.T,n=T.n,N=T.N,ev=T.ev,q=X.q,buf=b64(X.b64),p=0,R=63,L=new Float64Array(R),nl=0;
function vi(){var v=0,m=1,c;do{if(p>=buf.length)return 0;c=buf[p++];v+=(c&127)*m;m*=128;}while(c&128);return v;}
/* the candidate addresses, most recent first, each once */
function take(a){var j=0;while(j<nl&&L[j]!==a)j++;if(j===nl)return -1;L.copyWithin(j,j+1,nl);nl--;return j;}
function push(a){if(take(a)<0&&nl===R)nl--;L.copyWithin(1,0,nl);L[0]=a;nl++;}
var addr=new Float64Array(n).fill(-1),bs=new Float64Array(n),sp=X.spans,seg=0;
for(var e=0;e<N;e++){var x=ev[e];
if(x<0){if(addr[-x-1]>=0)push(addr[-x-1]);continue;}
if(!x)continue;
var id=x-1,c=vi();
if(c===0)continue;
var up=Math.ceil(T.size[id]/q),a;
if(c<=2*R){var j=(c-1)>>1;a=j<nl?L[j]:0;if(j<nl){L.copyWithin(j,j+1,nl);nl--;}}
else{var z=(c-1-2*R)>>1;seg+=z&1?-(z+1)/2:z/2;a=sp[seg*6+2]+vi()*q;}
var zs=(c-1)&1?vi():0;
addr[id]=a;bs[id]=(up+(zs&1?-(zs+1)/2:zs/2))*q;push(a+bs[id]);
}
/* pool's cuts (report/space.c, space_cuts_write): [create,release,addr] */
var nc=X.cuts||0,C=new Float64Array(3*nc),cb=X.cut64?b64(X.cut64):null,t=0,cs=0,i;
buf=cb;p=0;
for(i=0;i<nc;i++){var v=vi(),kd=v%3,a2;t+=(v-kd)/3;
if(kd<2){var y=ev[t],u=y>0?y-1:-y-1;a2=addr[u]+(kd?bs[u]:0);}
else{var z2=vi();cs+=z2&1?-(z2+1)/2:z2/2;a2=sp[cs*6+2]+vi()*q;}
C[3*i]=t;C[3*i+2]=a2;C[3*i+1]=t+vi();}
X._addr=addr;X._bs=bs;X._cuts=C;return X;
}
/* Run k's segments and blocks after event t, as report/space.c writes a
 * walk: the segments live then, the live allocations' blocks in them, and
 * each gap between them one free block (several where pool's cuts say). */
function anySnap(A,k,t){
var X=anyDecode(A,k);if(!X)return null;
var T=traces[A.t].T,sp=X.spans,segs=[],i,live=[],reserved=0,rs=X.reserved;
for(i=0;i<sp.length;i+=6)if(sp[i]<=t&&t<sp[i+1])segs.push([sp[i+2],sp[i+3],sp[i+4],sp[i+5],[]]);
for(i=0;i<rs.length&&rs[i]<=t;i+=2)reserved=rs[i+1];
segs.sort(function(a,b){return a[0]-b[0];});
for(i=0;i<T.n;i++)if(T.start[i]<=t&&t<T.end[i]&&X._addr[i]>=0)live.push(i);
live.sort(function(a,b){return X._addr[a]-X._addr[b];});
var s=0;
live.forEach(function(id){var a=X._addr[id];while(s<segs.length&&a>=segs[s][0]+segs[s][1])s++;
if(s<segs.length&&a>=segs[s][0])segs[s][4].push(a-segs[s][0],X._bs[id],id,0);});
/* pool's cuts open at t (report/space.c, "cuts"): a gap is cut there into
 * the free blocks it holds */
var cuts=[],ci=0,C=X._cuts;
for(i=0;i<C.length;i+=3)if(C[i]<=t&&t<C[i+1])cuts.push(C[i+2]);
cuts.sort(function(a,b){return a-b;});
function gap(out,base,from,to){
while(ci<cuts.length&&cuts[ci]<=base+from)ci++;
for(;ci<cuts.length&&cuts[ci]<base+to;ci++){out.push(from,cuts[ci]-base-from,-1,1);from=cuts[ci]-base;}
out.push(from,to-from,-1,1);}
segs.forEach(function(g){var bl=g[4],out=[],at=0;
for(var b=0;b<bl.length;b+=4){if(bl[b]>at)gap(out,g[0],at,bl[b]);out.push(bl[b],bl[b+1],bl[b+2],0);at=Math.max(at,bl[b]+bl[b+1]);}
if(at<g[1])gap(out,g[0],at,g[1]);g[4]=out;});
var q=anyRequest(A,X,t);
if(q)segs.forEach(function(g){var bl=g[4];for(var b=0;b<bl.length;b+=4)if(bl[b+3]===1)bl[b+3]=freeWhy(g,bl[b+1],q,X.small);});
var r={reserved:reserved,segs:segs,any:true,split:!!X.split_free&&X.cut64===undefined};if(q)r.req=q;return r;
}
/* The request the free blocks after event t are coloured against, as
 * report/space.c's space_instant_request finds it: the first ALLOC after t
 * that took a new segment, else the first ALLOC after t; as
 * [event,id,bytes,stream,rounded,took_new], or null. */
function anyRequest(A,X,t){
var T=traces[A.t].T,ev=T.ev,sp=X.spans,at=-1,i;
for(i=0;i<sp.length;i+=6){var c=sp[i];if(c>t&&c<T.N&&ev[c]>0&&(at<0||c<at))at=c;}
var took=at>=0?1:0;
for(i=t+1;at<0&&i<T.N;i++)if(ev[i]>0)at=i;
if(at<0)return null;
var id=ev[at]-1;
return [at,id,T.size[id],T.stream[id],X._addr[id]>=0?X._bs[id]:T.size[id],took];
}
/* Why a free block of size b in segment g could not serve request q (the
 * codes of WHY; report/space.c's space_why). */
function freeWhy(g,b,q,small){
var pool=small?(q[2]>small?0:1):-1;
if(pool>=0&&g[3]>=0&&g[3]!==pool)return 4;
if(g[2]>=0&&g[2]!==q[3])return 3;
if(b<q[2])return 2;
if(b<q[4])return 5;
return 6;
}
/* Every run after event t: rebuilt where the page has its blocks, else
 * the walk at the nearest precomputed instant. */
function spaceAt(A,t){
var D=A.D,best=0;
D.instants.forEach(function(I,j){if(Math.abs(I.event-t)<Math.abs(D.instants[best].event-t))best=j;});
A.ev=t;A.j=best;A.snaps=D.runs.map(function(r,k){return anySnap(A,k,t)||D.instants[best].snaps[k];});
}
/* At an instant the request comes later: a block big enough then may be
 * taken before it comes. */
function whyName(A,i){return A.mode==='instant'&&i===6?'big enough for it then (taken or not split by the time it comes)':WHY[i][0];}
var WHYS=['live','free','too small','another stream','another pool','rounding','big enough, not split','rest of the new segment'];
function whyShort(A,i){return A.mode==='instant'&&i===6?'big enough then':WHYS[i];}
function reqText(b,r){return size(b)+(size(r)!==size(b)?' ('+size(r)+' rounded)':r!==b?' ('+r+' B rounded)':'');}
function spaceDraw(A){
var D=A.D,cv=A.canvas,W=cv.clientWidth|0,n=D.runs.length,RH=72;
if(W<200)return;
cv.width=W;cv.height=n*RH+6;
var ctx=cv.getContext('2d'),LM=8,PW=W-2*LM,max=1,k,totals=[];
ctx.fillStyle='#fcfcfc';ctx.fillRect(0,0,W,cv.height);
for(k=0;k<n;k++){var sn=spaceSnap(A,k),tot=0;if(sn)sn.segs.forEach(function(s){tot+=s[1];});totals.push(tot);if(tot>max)max=tot;}
var why={},boxes=[];
for(k=0;k<n;k++){
var s=spaceSnap(A,k),y=k*RH+18,run=D.runs[k],pk=A.peaks[k];
ctx.fillStyle=run.color;ctx.fillRect(LM,y-11,9,9);
ctx.fillStyle='#222';ctx.font='12px system-ui,sans-serif';ctx.textAlign='left';
var head=run.label+' · reserved '+size(s?s.reserved:0)+(A.mode==='peak'&&pk?' at event '+pk.event+
(pk.alloc?': a request of '+reqText(pk.request,pk.rounded)+' on stream '+pk.stream+' took a new segment':''):
A.mode==='instant'&&s&&s.req?' · free blocks against the request at event '+s.req[0]+': '+reqText(s.req[2],s.req[4])+' on stream '+s.req[3]+(s.req[5]?', the next to take a new segment':' (none later took a new segment)'):'');
ctx.fillText(head,LM+14,y-2);
if(!s)continue;
/* a gap of 2 pixels between segments and an outline round each wide one;
 * a policy of many small segments (caching's 2 MiB ones) is drawn as
 * one strip of its blocks instead of a wall of outlines */
var G=s.segs.length*2<=PW*0.08?2:0,bpp=max/(PW-G*s.segs.length),x=LM,rows=[],mine={};
s.segs.forEach(function(sg,si){
var sw=Math.max(G?1:0,sg[1]/bpp),bl=sg[4];
ctx.fillStyle='#fff';ctx.fillRect(x,y+4,sw,26);
for(var b=0;b<bl.length;b+=4){
var bx=x+bl[b]/bpp,bw=Math.max(0.5,bl[b+1]/bpp),w_=bl[b+3],id=bl[b+2];
ctx.fillStyle=w_===0&&id===A.pin?'#ffd700':WHY[w_][1];ctx.fillRect(bx,y+4,bw,26);
if(b&&w_&&bl[b-1]){ctx.fillStyle='#fff';ctx.fillRect(Math.round(bx),y+4,1,26);}/* a free block after a free block (pool) */
why[w_]=1;mine[w_]=(mine[w_]||0)+bl[b+1];
rows.push([bx,bx+bw,si,b]);
}
if(sw>=4){ctx.strokeStyle='#555';ctx.lineWidth=1;ctx.strokeRect(Math.round(x)+0.5,y+4.5,Math.max(1,Math.round(sw)-1),25);}
x+=sw+G;
});
/* this policy's bytes by colour, under its strip */
ctx.fillStyle='#555';ctx.font='11px system-ui,sans-serif';
ctx.fillText(s.segs.length+' segment'+(s.segs.length===1?'':'s')+(G?'':' (the narrow ones not outlined)')+': '+
WHY.map(function(w,i){return mine[i]?whyShort(A,i)+' '+size(mine[i]):'';}).filter(String).join(' · '),LM,y+44);
boxes.push({y0:y+4,y1:y+30,rows:rows,snap:s,k:k});
}
A.boxes=boxes;A.totals=totals;
var lg=A.fig.querySelector('.aslegend');lg.textContent='';
WHY.forEach(function(w,i){if(!why[i])return;var sp=document.createElement('span');sp.className='lg2';
var sw=document.createElement('span');sw.className='sw';sw.style.background=w[1];sp.appendChild(sw);
sp.appendChild(document.createTextNode(whyName(A,i)));lg.appendChild(sp);});
A.fig.querySelector('.ase').textContent=A.mode==='instant'?String(A.ev):'';
var note=A.fig.querySelector('.asnote');
note.textContent=A.mode==='peak'?'At its peak each policy holds its most; a check against the stored runs: '+
D.runs.map(function(r,i){var s=spaceSnap(A,i);return r.label+' '+(s&&s.reserved===r.peak_reserved?'reproduces its peak ('+size(r.peak_reserved)+')':'stored '+size(r.peak_reserved)+', replayed '+size(s?s.reserved:0));}).join('; ')+'.'
:'After event '+A.ev+': '+(A.snaps.every(function(s){return s&&s.any;})?'every policy':D.runs.map(function(r,k){var s=A.snaps[k];return r.label+(s&&s.any?'':' at event '+D.instants[A.j].event+', the nearest of '+D.instants.length+' precomputed instants (this page does not carry its blocks for any event: its budget was spent, or the trace\'s allocations are not all in the view above)');}).join('; '))+
' as it stands then, rebuilt from every allocation\'s block: the segments held, the live blocks and, between them, the free blocks, each coloured by why it could not serve, as it stands then, the request named on its policy\'s line: the first after this event that took a new segment, else the first after it (the allocations and frees between may change the blocks first; plain green where there is none).'+
D.runs.map(function(r,k){var s=A.snaps[k];return s&&s.split?'  '+r.label+' keeps free blocks side by side unmerged (its walks show them): a gap drawn as one block may be several.':'';}).join('');
}
function spaceHover(A,ev){
var r=A.canvas.getBoundingClientRect(),x=ev.clientX-r.left,y=ev.clientY-r.top;
for(var i=0;i<A.boxes.length;i++){var B=A.boxes[i];if(y<B.y0||y>B.y1)continue;
for(var j=0;j<B.rows.length;j++){var h=B.rows[j];if(x>=h[0]-0.5&&x<=h[1]+0.5){
var sg=B.snap.segs[h[2]],bl=sg[4],b=h[3],id=bl[b+2],V=traces[A.t];
tip.textContent='';
if(bl[b+3]===0&&id>=0&&V&&V.T)describe(V,id,tip);
else{var d=document.createElement('div');d.className='th';d.textContent=size(bl[b+1])+' · '+whyName(A,bl[b+3]);tip.appendChild(d);}
var s2=document.createElement('div');s2.className='dd';
s2.textContent='block at offset '+size(bl[b])+' of a segment of '+size(sg[1])+(sg[2]>=0?', stream '+sg[2]:', any stream')+(sg[3]>=0?', pool '+(sg[3]?'small':'large'):'');
tip.appendChild(s2);tip._id=-1;place(tip,ev);A.hover=[B.k,h[2],b];return;}}}
tip.style.display='none';A.hover=null;
}
function spacePick(t,event){
document.querySelectorAll('figure.as[data-t="'+t+'"]').forEach(function(fig){
var A=spaces[fig.getAttribute('data-g')],t=Math.max(0,Math.min(A.D.events-1,Math.round(event)));
spaceAt(A,t);A.mode='instant';A.fig.querySelector('input[value="instant"]').checked=true;A.fig.querySelector('.asr').value=t;spaceDraw(A);
});
}
function spaceInit(){
document.querySelectorAll('figure.as').forEach(function(fig){
var g=fig.getAttribute('data-g'),D=JSON.parse(fig.querySelector('script.asd').textContent);
var A={g:g,t:fig.getAttribute('data-t'),D:D,fig:fig,canvas:fig.querySelector('canvas.asv'),mode:'peak',j:0,ev:0,snaps:[],pin:-1,peaks:[]};
D.peaks.forEach(function(p){A.peaks[p.run]=p;});
spaces[g]=A;spaceAt(A,D.instants.length?D.instants[0].event:0);spaceDraw(A);
var rg=fig.querySelector('.asr');rg.max=Math.max(0,D.events-1);rg.value=A.ev;
fig.querySelectorAll('input[type="radio"]').forEach(function(r){r.addEventListener('change',function(){A.mode=r.value;spaceDraw(A);});});
rg.addEventListener('input',function(e){spaceAt(A,+e.target.value);A.mode='instant';fig.querySelector('input[value="instant"]').checked=true;spaceDraw(A);});
A.canvas.addEventListener('mousemove',function(ev){spaceHover(A,ev);});
A.canvas.addEventListener('mouseleave',function(){tip.style.display='none';});
A.canvas.addEventListener('click',function(){var h=A.hover;if(!h)return;var bl=spaceSnap(A,h[0]).segs[h[1]][4],id=bl[h[2]+2];
if(bl[h[2]+3]===0&&id>=0&&traces[A.t]&&traces[A.t].T)pin(traces[A.t],id);});
fig._pin=function(id){A.pin=id;spaceDraw(A);};
fig.classList.add('as');
});
/* a click (not a drag) on a memory chart picks the instant */
document.querySelectorAll('svg.ln[data-t]').forEach(function(svg){
svg._click=function(ev){var t=svg.getAttribute('data-t'),V=traces[t],r=svg.getBoundingClientRect(),vb=svg.viewBox.baseVal;
var L=+svg.getAttribute('data-ml')*r.width/vb.width,P=+svg.getAttribute('data-pw')*r.width/vb.width,f=(ev.clientX-r.left-L)/P;
if(f<0||f>1)return;spacePick(t,V.w[0]+f*(V.w[1]-V.w[0]));};
});
addEventListener('resize',function(){for(var g in spaces)spaceDraw(spaces[g]);});
}
try{init();spaceInit();}catch(e){window.gmsim.errors.push(String(e));throw e;}
window.gmsim.setWindow=setWindow;window.gmsim.pick=spacePick;window.gmsim.spaceAt=function(g,k,t){return anySnap(spaces[g],k,t);};window.gmsim.render=render;window.gmsim.overview=overview;
})();
})();
