/* report/page.js — the report page's script, embedded in the page at build time
 * (cmake/embed.cmake; report/html.c writes it into the page's script element): the
 * table sort, the hover, the legend toggles and the #selftest.  Texts from
 * the page reach the hover through textContent only. */
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
function place(ev){
tip.style.display='block';
var x=ev.clientX+14,y=ev.clientY+14,w=tip.offsetWidth,h=tip.offsetHeight;
if(x+w>innerWidth-4)x=Math.max(4,ev.clientX-14-w);
if(y+h>innerHeight-4)y=Math.max(4,ev.clientY-14-h);
tip.style.left=x+'px';tip.style.top=y+'px';
}
function hide(){tip.style.display='none';}
/* Line charts: the point of each visible series nearest the pointer in x. */
function lineHover(svg,ev){
var m=svg.getScreenCTM();if(!m)return;
var p=svg.createSVGPoint();p.x=ev.clientX;p.y=ev.clientY;p=p.matrixTransform(m.inverse());
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
var q=pts.getItem(lo),ev_=pl.hasAttribute('data-e')?nums(pl,'data-e'):nums(svg,'data-e');
if(head===null){
head=svg.getAttribute('data-xn')+' '+ev_[lo];at=ev_[lo];
var x=document.createElementNS(ns,'line');
x.setAttribute('x1',q.x);x.setAttribute('x2',q.x);x.setAttribute('y1',0);x.setAttribute('y2',svg.viewBox.baseVal.height);
x.setAttribute('class','cross');g.appendChild(x);
}
var c=document.createElementNS(ns,'circle');
c.setAttribute('cx',q.x);c.setAttribute('cy',q.y);c.setAttribute('r',3.5);c.setAttribute('fill',pl.getAttribute('stroke'));
g.appendChild(c);
rows.push([nums(pl,'data-v')[lo],pl]);
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
place(ev);
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
place(ev);
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
