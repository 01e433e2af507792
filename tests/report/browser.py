#!/usr/bin/env python3
"""tests/report/browser.py — the report's views in a real browser (headless
Chromium driven through the DevTools protocol, tests/report/cdp.py), with
real input events: hover a band of the active-memory view and read its
tooltip (checked against the trace's own events, `gmsim export`), pin it,
zoom with the wheel and check both axes, pan by dragging, brush a window on
the overview strip, reset with a double-click, pick an instant for the
address space and check it against the stored run, toggle a policy in a
legend; no element wider than a 1280-pixel window.  Any exception or
console error of the page fails the test.  Screenshots are kept in --out
for a person to look at.

    browser.py --gmsim build/h/gmsim --data ../shared/data --out build/h/report-browser
    browser.py ... --big      # a 1M-event synthesized trace: size and open time

Exit 0 passed, 1 failed, 77 skipped (no chromium: `scripts/deps chromium`).
"""
import argparse
import csv
import io
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cdp  # noqa: E402

WIDTH = 1280
failures = []


def check(cond, what):
    print('%s: %s' % ('ok' if cond else 'FAIL', what))
    if not cond:
        failures.append(what)


def run(*args, cwd):
    r = subprocess.run(list(args), cwd=cwd, capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit('%s failed (%d): %s' % (' '.join(args), r.returncode, r.stderr))
    return r.stdout


def size_text(b):
    """Bytes as gmsim writes them (gm_format_size)."""
    if b < 1024:
        return '%d B' % b
    units = ['KiB', 'MiB', 'GiB', 'TiB', 'PiB', 'EiB']
    u, v = 0, b / 1024
    while u + 1 < len(units) and v >= 1023.995:
        v /= 1024
        u += 1
    return '%.2f %s' % (v, units[u])


def band_point(b, t, want_frames):
    """Page coordinates of the middle of the tallest band of trace t (with
    frames when want_frames) in a few columns, and its allocation id."""
    return b.eval('''(function(){
var V=gmsim.traces[%s],r=V.canvas.getBoundingClientRect(),best=null,bl=0;
for(var x=V.PW>>2;x<V.PW;x+=17){var run=0,prev=-2;
for(var y=V.PH-1;y>=-1;y--){var id=y>=0?V.owner[y*V.PW+x]:-3;
if(id===prev){run++;continue;}
if(prev>=0&&run>bl&&(!%s||V.T.stack[prev]>0)){bl=run;best=[r.left+80+x+0.5,r.top+y+1+run/2,prev];}
run=1;prev=id;}}
return best;})()''' % (json.dumps(t), 'true' if want_frames else 'false'))


def views(b, gmsim, tmp, out, trace, ntrace):
    """The checks on trace index ntrace (the page's data-t) named trace."""
    t = str(ntrace)
    b.scroll_to('#am' + t)
    want_frames = b.eval('gmsim.traces[%s].S.stacks.length>0' % json.dumps(t))
    pt = band_point(b, t, want_frames)
    check(pt is not None, '%s: a band 3 pixels tall to hover' % trace)
    if pt is None:
        return
    x, y, aid = pt
    b.mouse('mouseMoved', x, y)
    tip = b.eval('(function(){var t=document.querySelector(".amtip");'
                 'return getComputedStyle(t).display==="none"?"":t.innerText;})()')
    lines = tip.split('\n')
    # The trace's own record of that allocation.
    rows = list(csv.DictReader(io.StringIO(run(gmsim, 'export', 'r.db', '-t', trace, cwd=tmp))))
    start = next(i for i, r in enumerate(rows) if r['op'] == 'alloc' and int(r['id']) == aid)
    end = next((i for i, r in enumerate(rows) if r['op'] == 'free' and int(r['id']) == aid), None)
    size = int(rows[start]['size'])
    check(lines[0] == '%s · allocation %d' % (size_text(size), aid),
          '%s: the tooltip names the allocation and its size (%r)' % (trace, lines[0]))
    life = 'lifetime: event %d → %s (' % (start, 'not freed' if end is None else
                                             'freed at event %d' % end)
    check(len(lines) > 1 and lines[1].startswith(life),
          '%s: the tooltip gives its lifetime from the trace (%r)' % (trace, lines[1:2]))
    stream = int(rows[start]['stream'], 16)
    check(len(lines) > 2 and lines[2] == 'stream %d' % stream,
          '%s: the tooltip gives its stream (%r)' % (trace, lines[2:3]))
    if want_frames:
        site, frames = lines[3], lines[4:]
        check(any(f.startswith(site.split('(')[0][:40]) for f in frames) or site in tip,
              '%s: the first frame shown (%r) is one of the stack' % (trace, site))
        py = [f for f in frames if '.py' in f]
        check(not py or '.py' in site,
              '%s: a stack with Python frames shows a Python frame first (%r)' % (trace, site))
    b.screenshot(os.path.join(out, 'active-memory-hover-%s.png' % t), full=False)
    b.screenshot(os.path.join(out, 'doc-active-%s.png' % t), element='#am%s .amv' % t)
    # Click pins it: the panel under the view shows it, its band turns gold.
    b.click(x, y)
    pinned = b.eval('document.querySelector("#am%s .pin").innerText' % t)
    check(pinned.split('\n')[0] == lines[0], '%s: a click pins the band (%r)' % (trace, pinned[:60]))
    px = b.eval('(function(){var V=gmsim.traces[%s],r=V.canvas.getBoundingClientRect();'
                'return Array.from(V.canvas.getContext("2d").getImageData(%f-r.left,%f-r.top,1,1)'
                '.data);})()' % (json.dumps(t), x, y))
    check(px[:3] == [255, 215, 0], '%s: the pinned band is drawn gold (%r)' % (trace, px))
    # Zoom: two wheel steps at the pointer narrow the window around it; the
    # canvas' and the memory chart's axes follow.
    n = b.eval('gmsim.traces[%s].N' % json.dumps(t))
    inview = ('(function(){var s=document.querySelector(\'svg.ln[data-t="%s"]\'),pl=s.querySelector('
              '\'polyline.sr[data-s="r0"]\'),p=pl.points,k=s._k||1,b=s._b||0,ml=+s.getAttribute('
              '"data-ml"),pw=+s.getAttribute("data-pw"),xs={};for(var i=0;i<p.numberOfItems;i++){'
              'var x=p.getItem(i).x*k+b;if(x>=ml&&x<=ml+pw)xs[x.toFixed(2)]=1;}return [Object.keys('
              'xs).length,pl.hasAttribute("data-fv")];})()' % t)
    full_points, has_fine = b.eval(inview)
    before = b.eval('(function(){var V=gmsim.traces[%s],r=V.canvas.getBoundingClientRect();'
                    'return V.w[0]+(%f-r.left-80)/(r.width-80)*(V.w[1]-V.w[0]);})()'
                    % (json.dumps(t), x))
    b.mouse('mouseWheel', x, y, delta_y=-100)
    b.mouse('mouseWheel', x, y, delta_y=-100)
    w = b.eval('gmsim.traces[%s].w' % json.dumps(t))
    check(abs((w[1] - w[0]) - n * 0.64) < 2 and w[0] <= before <= w[1],
          '%s: the wheel zooms to 64%% around the pointer (%r of %d)' % (trace, w, n))
    labels = b.eval('gmsim.traces[%s].xlabels' % json.dumps(t))
    check(labels and min(labels) >= w[0] and max(labels) <= w[1],
          '%s: the x axis labels the window (%r)' % (trace, labels))
    svg = b.eval('Array.from(document.querySelectorAll(\'svg.ln[data-t="%s"] g.xj text\'))'
                 '.map(function(e){return e.textContent;})' % t)
    check(len(svg) >= 3, '%s: the memory chart relabels its axis (%r)' % (trace, svg))
    # Zoomed, the chart redraws its lines from the stored timelines' every
    # point: more distinct points in the window than its 300 points had.
    zoomed_points, _ = b.eval(inview)
    stretched = full_points * 0.64
    check(not has_fine or zoomed_points > stretched * 1.2,
          '%s: zoomed to 64%%, the reserved line shows %d points, not the %.0f of its 300 '
          'stretched' % (trace, zoomed_points, stretched))
    b.screenshot(os.path.join(out, 'active-memory-zoomed-%s.png' % t), full=False)
    b.scroll_to('#g%s' % t)
    b.screenshot(os.path.join(out, 'doc-zoom-%s.png' % t), element='#g%s' % t)
    b.scroll_to('#am' + t)
    # Pan: a drag of 200 pixels to the left moves the window later by
    # 200 pixels' worth of events.
    pw = b.eval('gmsim.traces[%s].PW' % json.dumps(t))
    b.drag(x, y, x - 200)
    w2 = b.eval('gmsim.traces[%s].w' % json.dumps(t))
    want = min(200 / pw * (w[1] - w[0]), n - w[1])
    check(abs((w2[0] - w[0]) - want) < 0.02 * (w[1] - w[0]) + 1,
          '%s: a drag pans (%r -> %r)' % (trace, w, w2))
    # Brush: a drag on the overview strip from a quarter to a half.
    r = b.eval('(function(){var r=gmsim.traces[%s].ov.getBoundingClientRect();'
               'return [r.left,r.top,r.width,r.height];})()' % json.dumps(t))
    ox = lambda f: r[0] + 80 + f * (r[2] - 80)
    b.drag(ox(0.25), r[1] + r[3] / 2, ox(0.5))
    w3 = b.eval('gmsim.traces[%s].w' % json.dumps(t))
    check(abs(w3[0] - 0.25 * n) < 0.01 * n and abs(w3[1] - 0.5 * n) < 0.01 * n,
          '%s: a brush on the strip picks the window (%r)' % (trace, w3))
    b.click(x, y, clicks=2)
    w4 = b.eval('gmsim.traces[%s].w' % json.dumps(t))
    check(w4 == [0, n], '%s: a double-click resets (%r)' % (trace, w4))
    b.mouse('mouseMoved', 2, 2)


def space(b, gmsim, tmp, out, tag=''):
    """The address space at each policy's peak, against the stored runs,
    then at an instant picked with a click on the memory chart; tag names
    the screenshots of another page."""
    import sqlite3
    db = sqlite3.connect(os.path.join(tmp, 'r.runs.db'))
    stored = {}
    for trace, policy, metrics in db.execute('select trace_name, policy, metrics from runs'):
        stored.setdefault((trace, policy), set()).add(json.loads(metrics)['peak_reserved'])
    db.close()
    figs = b.eval('Array.from(document.querySelectorAll("figure.as")).map(function(f){'
                  'return [f.getAttribute("data-g"),f.getAttribute("data-t"),'
                  'f.getAttribute("data-name")];})')
    check(len(figs) > 0, 'an address-space view (%d)' % len(figs))
    for g, t, trace in figs:
        b.scroll_to('#as' + g)
        got = b.eval('(function(){var A=gmsim.spaces[%s];return A.D.runs.map(function(r,k){'
                     'var p=A.peaks[k];return [r.label,p?p.snap.reserved:-1,p?p.snap.segs.length:0,'
                     'p?p.snap.segs.reduce(function(a,s){for(var i=3;i<s[4].length;i+=4)'
                     'a[s[4][i]]=(a[s[4][i]]||0)+1;return a;},{}):{}];});})()' % json.dumps(g))
        for label, reserved, nseg, why in got:
            runs = stored.get((trace, label.split(' ')[0]), ())
            check(reserved in runs, 'space %s: %s at its peak holds %d bytes, its stored run\'s '
                  'peak (%s)' % (trace, label, reserved, sorted(runs)))
            check(nseg > 0 and why.get('0', 0) > 0,
                  'space %s: %s shows %d segments with live blocks (%r)' % (g, label, nseg, why))
        b.screenshot(os.path.join(out, 'address-space-peak-%s%s.png' % (tag, g)), full=False)
        b.screenshot(os.path.join(out, 'doc-space-peak-%s%s.png' % (tag, g)), element='#as' + g)
        # Every run the page has the blocks of, rebuilt at each precomputed
        # instant, is the walk gmsim made there: the same segments, the same
        # blocks, the same free gaps, each free block coloured as gmsim
        # coloured it against the same request (the first after the instant
        # that took a new segment, else the first after it).
        same = b.eval('(function(){var A=gmsim.spaces[%s],out=[];A.D.instants.forEach(function(I)'
                      '{I.snaps.forEach(function(w,k){var s=gmsim.spaceAt(%s,k,I.event);if(!s)return;'
                      'var a=JSON.stringify(w.segs.slice().sort(function(x,y){return x[0]-y[0];})),'
                      'why={};w.segs.forEach(function(g){for(var i=3;i<g[4].length;i+=4)'
                      'if(g[4][i])why[g[4][i]]=1;});'
                      'out.push([k,I.event,a===JSON.stringify(s.segs)&&w.reserved===s.reserved&&'
                      'JSON.stringify(w.req)===JSON.stringify(s.req),w.req||null,Object.keys(why)]);'
                      '});});return out;})()' % (json.dumps(g), json.dumps(g)))
        check(same and all(x[2] for x in same),
              'space %s: rebuilt at the %d precomputed instants x runs, the address space and '
              'its colours are the walk\'s (%r)' % (g, len(same), [x[:4] for x in same
                                                              if not x[2]][:3]))
        reasons = set(c for x in same for c in x[4]) - {'1'}
        check(all(x[3] for x in same) and reasons,
              'space %s: gmsim colours the free blocks at its walked instants against a later '
              'request (reasons %r)' % (g, sorted(reasons)))
        # A click on the trace's memory chart, at 37% of its plot, picks that
        # very event (not one of the precomputed instants).
        r = b.eval('(function(){var s=document.querySelector(\'svg.ln[data-t="%s"]\'),'
                   'r=s.getBoundingClientRect(),vb=s.viewBox.baseVal;s.scrollIntoView({block:"center"});'
                   'r=s.getBoundingClientRect();return [r.left+(+s.getAttribute("data-ml")+'
                   '0.37*s.getAttribute("data-pw"))*r.width/vb.width,r.top+r.height/2,'
                   '+s.getAttribute("data-n")];})()' % t)
        b.click(r[0], r[1])
        res = b.eval('(function(){var A=gmsim.spaces[%s];return [A.mode,A.ev,A.D.instants.map('
                     'function(i){return i.event;}),A.snaps.map(function(s){return s?[!!s.any,'
                     's.reserved,s.segs.reduce(function(a,g){'
                     'for(var i=0;i<g[4].length;i+=4)if(g[4][i+3]===0)a+=g[4][i+1];return a;},0)]'
                     ':null;}),A.boxes.map(function(B){return B.rows.length;}),A.snaps.map('
                     'function(s){return s?s.segs.reduce(function(a,g){return a+g[4].length/4;},0)'
                     ':0;})];})()' % json.dumps(g))
        mode, ev, instants, sums, drawn, blocks = res
        check(mode == 'instant' and abs(ev - 0.37 * r[2]) <= r[2] / 400 + 1 and ev not in instants,
              'space %s: a click on the chart at event %.0f shows event %r, not a precomputed '
              'instant' % (g, 0.37 * r[2], ev))
        check(drawn == blocks, 'space %s: every block of the instant is drawn (%r of %r)'
              % (g, drawn, blocks))
        reqs = b.eval('(function(){var A=gmsim.spaces[%s];return [A.snaps.map(function(s){'
                      'return s&&s.any?(s.req||null):0;}),A.fig.querySelector(".asnote")'
                      '.textContent];})()' % json.dumps(g))
        check(all(q != 0 and q and q[0] > ev for q in reqs[0]) and 'the request named' in reqs[1],
              'space %s: at event %d the free blocks are coloured against a later request, '
              'named (%r)' % (g, ev, reqs[0]))
        # Against gmsim's own replay of the stored runs: its reserved and
        # allocated bytes after that event (one timeline point per event on
        # a short trace): the reserved bytes the page states, the device's
        # count (pool's upstream blocks are multiples of 256 bytes, which
        # the device rounds), and the live blocks it draws.
        labels = b.eval('gmsim.spaces[%s].D.runs.map(function(r){return r.label;})' % json.dumps(g))
        for k, label in enumerate(labels):
            if not sums[k] or not sums[k][0]:
                continue
            rep = json.loads(run(gmsim, 'replay', 'r.db', '-t', trace, '-p', label.split(' ')[0],
                                 '--start', 'cold' if '(cold)' in label else 'warm', '--json',
                                 '--timeline', cwd=tmp))
            tl = rep['runs'][0]['timeline']
            col = tl['columns']
            pts = {p[col.index('event')]: p for p in tl['points']}
            if ev not in pts or ev - 1 not in pts:
                print('note: %s: no single-event timeline point at %d' % (trace, ev))
                continue
            want = (pts[ev][col.index('reserved')], pts[ev][col.index('allocated')])
            check(tuple(sums[k][1:]) == want,
                  'space %s: %s after event %d holds %r (reserved, allocated), as gmsim replay '
                  'says (%r)' % (g, label, ev, sums[k][1:], want))
        b.scroll_to('#as' + g)
        b.screenshot(os.path.join(out, 'doc-space-instant-%s%s.png' % (tag, g)), element='#as' + g)
        hov = b.eval('(function(){var A=gmsim.spaces[%s],B=A.boxes[0],r=A.canvas.'
                     'getBoundingClientRect();if(!B||!B.rows.length)return null;var h=B.rows['
                     'B.rows.length>>1];return [r.left+(h[0]+h[1])/2,r.top+(B.y0+B.y1)/2];})()'
                     % json.dumps(g))
        if hov:
            b.mouse('mouseMoved', hov[0], hov[1])
            tip = b.eval('(function(){var t=document.querySelector(".amtip");'
                         'return getComputedStyle(t).display==="none"?"":t.innerText;})()')
            check('segment of' in tip, 'space %s: a block\'s tooltip (%r)' % (g, tip[:80]))
        b.screenshot(os.path.join(out, 'address-space-instant-%s%s.png' % (tag, g)), full=False)
        b.mouse('mouseMoved', 2, 2)


def pool_cuts(b, gmsim, out):
    """pool keeps touching free blocks of different streams apart: at any
    instant the page draws each, as gmsim's walks show them."""
    with tempfile.TemporaryDirectory(prefix='gmsim-browser-pool-') as tmp:
        run(gmsim, 'synth', '--events', '3000', '--seed', '4', '--live-max', '64MiB',
            '-o', 'r.db', '--name', 'small', cwd=tmp)
        run(gmsim, 'sweep', 'r.db', '-p', 'pool', cwd=tmp)
        run(gmsim, 'report', 'r.runs.db', 'r.db', '-o', 'p.html', cwd=tmp)
        b.open('file://' + os.path.join(tmp, 'p.html'))
        check(b.eval('gmsim.errors.length') == 0, 'the pool page starts')
        side = b.eval('(function(){var A=gmsim.spaces["0"],X=A.D.any&&A.D.any[0],n=0;'
                      'A.D.instants.forEach(function(I){I.snaps[0].segs.forEach(function(g){'
                      'for(var i=7;i<g[4].length;i+=4)if(g[4][i]&&g[4][i-4])n++;});});'
                      'return [X?(X.cuts||0):-1,n];})()')
        check(side[0] > 0 and side[1] > 0, 'pool: the page carries its cuts (%d), and gmsim\'s '
              'walks show free blocks side by side (%d times at its instants)' % tuple(side))
        # pool takes a block of another stream's list (after waiting on
        # that stream), so its segments serve every stream (-1) and none of
        # its free blocks is coloured "another stream" (3), on a trace of
        # two streams.
        anyst = b.eval('(function(){var A=gmsim.spaces["0"],seen={},n=0,snaps=A.D.instants.map('
                       'function(I){return I.snaps[0];}).concat(A.D.peaks.map(function(p){'
                       'return p.snap;}));snaps.forEach(function(w){w.segs.forEach(function(g){'
                       'seen[g[2]]=1;for(var i=3;i<g[4].length;i+=4)if(g[4][i]===3)n++;});});'
                       'return [Object.keys(seen),n,gmsim.spaceAt("0",0,A.D.instants[5].event)'
                       '.segs.filter(function(g){return g[2]!==-1;}).length];})()')
        check(anyst[0] == ['-1'] and anyst[1] == 0 and anyst[2] == 0,
              'pool: its segments serve any stream (streams %r, rebuilt %d others) and no free '
              'block is coloured "another stream" (%d)' % (anyst[0], anyst[2], anyst[1]))
        space(b, gmsim, tmp, out, tag='pool-')
        note = b.eval('gmsim.spaces["0"].fig.querySelector(".asnote").textContent')
        check('may be several' not in note, 'pool: no note that a gap may be several blocks '
              '(%r)' % note[-120:])


def seqzoom(b, gmsim, out):
    """The charts against seq_len zoom and pan on their own."""
    with tempfile.TemporaryDirectory(prefix='gmsim-browser-seq-') as tmp:
        run(gmsim, 'synth', '--model', 'gpt2', '--seq', '128,256,512', '-o', 'm.db', cwd=tmp)
        run(gmsim, 'sweep', 'm.db', '-p', 'caching,bfc', '-j', '2', cwd=tmp)
        run(gmsim, 'report', 'm.runs.db', 'm.db', '-o', 'm.html', cwd=tmp)
        b.open('file://' + os.path.join(tmp, 'm.html'))
        b.screenshot(os.path.join(out, 'doc-report.png'), top=2000, scale=0.75)
        b.scroll_to('#seq-len')
        r = b.eval('(function(){var s=document.querySelector(\'svg.ln.cat[data-t="seq0"]\'),'
                   'r=s.getBoundingClientRect(),vb=s.viewBox.baseVal,k=r.width/vb.width;return ['
                   'r.left+(+s.getAttribute("data-ml")+0.5*s.getAttribute("data-pw"))*k,'
                   'r.top+r.height/2];})()')
        for _ in range(3):
            b.mouse('mouseWheel', r[0], r[1], delta_y=-100)
        w = b.eval('gmsim.traces.seq0.w')
        labels = b.eval('Array.from(document.querySelectorAll(\'svg.ln.cat[data-t="seq0"] g.xj '
                        'text\')).map(function(e){return e.textContent;})')
        check(abs((w[1] - w[0]) - 512) < 2 and w[0] < 500 < w[1] and labels == ['256'],
              'seq_len chart: the wheel zooms around the pointer and the axis keeps the seq_len '
              'in view (%r, %r)' % (w, labels))
        b.mouse('mouseMoved', r[0], r[1])
        tip = b.eval('document.querySelector(".tip").innerText')
        check(tip.startswith('seq_len 256'), 'seq_len chart: the hover of the zoomed chart (%r)'
              % tip[:40])
        other = b.eval('gmsim.traces.seq1.w')
        check(other == [0, 1000], 'seq_len chart: the other chart keeps its window (%r)' % other)
        b.screenshot(os.path.join(out, 'seq-len-zoomed.png'), full=False)
        b.screenshot(os.path.join(out, 'doc-seq-zoom.png'), element='#seq-len figure')
        b.click(r[0], r[1], clicks=2)
        check(b.eval('gmsim.traces.seq0.w') == [0, 1000], 'seq_len chart: a double-click resets')


def partial(b, gmsim, tmp, out, trace):
    """A page whose budget of allocations is spent within a trace: the
    first ones drawn, the rest named and shaded, the address space at the
    walked instants."""
    run(gmsim, 'report', 'r.runs.db', 'r.db', '-o', 'p.html', '--embed-allocs', '3000', cwd=tmp)
    b.open('file://' + os.path.join(tmp, 'p.html'))
    note = b.eval('(document.querySelector("#am0 .part")||{}).textContent||""')
    got = b.eval('(function(){var V=gmsim.traces["0"];return [V.T.n,V.T.N,V.N,V.w];})()')
    check(note.startswith('Drawn: the first 3000 allocations, to event %d of %d' % (got[1], got[2]))
          and got[0] == 3000 and got[1] < got[2] and got[3] == [0, got[2]],
          '%s: past the budget, the first 3000 allocations are drawn and the note says what '
          'is left out (%r, %r)' % (trace, note[:90], got))
    b.scroll_to('#am0')
    px = b.eval('(function(){var V=gmsim.traces["0"],r=V.canvas.getBoundingClientRect();'
                'return Array.from(V.canvas.getContext("2d").getImageData(r.width-3,r.height/2,1,1)'
                '.data);})()')
    check(px[:3] == [0xec, 0xef, 0xf2], '%s: the events not embedded are shaded (%r)'
          % (trace, px))
    pt = band_point(b, '0', False)
    if pt:
        b.mouse('mouseMoved', pt[0], pt[1])
        tip = b.eval('document.querySelector(".amtip").innerText')
        check(tip.startswith(size_text(b.eval('gmsim.traces["0"].T.size[%d]' % pt[2]))),
              '%s: a band of the part drawn has its tooltip (%r)' % (trace, tip[:40]))
        b.mouse('mouseMoved', 2, 2)
    b.screenshot(os.path.join(out, 'active-memory-part.png'), full=False)
    b.eval('gmsim.pick("0",%d)' % (got[2] - 10))
    sn = b.eval('document.querySelector("#as0 .asnote").textContent')
    check('precomputed instants' in sn, '%s: the address space past the part drawn is the '
          'nearest walked instant (%r)' % (trace, sn[:120]))
    check(b.eval('gmsim.errors.length') == 0 and not b.errors, 'the partial page has no error')


def legend(b):
    """A click on a legend entry hides its series."""
    b.scroll_to('#memory-over-time figure .lg[data-s="r0"]')
    r = b.eval('(function(){var e=document.querySelector(\'#memory-over-time figure '
               '.lg[data-s="r0"]\').getBoundingClientRect();return [e.left+e.width/2,'
               'e.top+e.height/2];})()')
    b.click(r[0], r[1])
    d = b.eval('getComputedStyle(document.querySelector(\'#memory-over-time figure '
               'polyline[data-s="r0"]\')).display')
    check(d == 'none', 'a legend click hides its policy (%s)' % d)
    b.click(r[0], r[1])


def overflow(b):
    """Nothing wider than the window: the page, every figure and table."""
    wide = b.eval('''(function(){var out=[],W=document.documentElement.clientWidth;
document.querySelectorAll('body *').forEach(function(e){var r=e.getBoundingClientRect();
if(r.width&&r.right>W+0.5&&!e.closest('.wide'))out.push(e.tagName+'.'+e.className+' '+Math.round(r.right));});
return out.slice(0,5).concat([document.documentElement.scrollWidth]);})()''')
    check(wide == [WIDTH], 'nothing overflows at %d px (%r)' % (WIDTH, wide))


def small(b, gmsim, data, out):
    with tempfile.TemporaryDirectory(prefix='gmsim-browser-') as tmp:
        real = os.path.join(data, 'snapshots', 'lmmedium_ctx128_train_fp32.pickle')
        traces = []
        if os.path.exists(real):
            run(gmsim, 'import', real, '-o', 'r.db', cwd=tmp)
            traces.append('lmmedium_ctx128_train_fp32')
        else:
            print('note: %s absent: a synthesized trace only' % real)
        run(gmsim, 'synth', '--events', '3000', '--seed', '4', '--live-max', '64MiB',
            '-o', 'r.db', '--name', 'small', cwd=tmp)
        traces.append('small')
        run(gmsim, 'sweep', 'r.db', '-p', 'caching,bfc,native', '-j', '2', cwd=tmp)
        run(gmsim, 'report', 'r.runs.db', 'r.db', '-o', 'r.html', cwd=tmp)
        b.open('file://' + os.path.join(tmp, 'r.html'))
        check(b.eval('gmsim.errors.length') == 0, 'the views start')
        overflow(b)
        b.screenshot(os.path.join(out, 'report.png'))
        names = b.eval('Array.from(document.querySelectorAll("figure.am")).map(function(f){'
                       'return [f.getAttribute("data-t"),f.getAttribute("data-name")];})')
        for t, name in names:
            views(b, gmsim, tmp, out, name, int(t))
        space(b, gmsim, tmp, out)
        legend(b)
        partial(b, gmsim, tmp, out, traces[0])
    pool_cuts(b, gmsim, out)
    seqzoom(b, gmsim, out)


def big(b, gmsim, out):
    with tempfile.TemporaryDirectory(prefix='gmsim-browser-big-') as tmp:
        run(gmsim, 'synth', '--events', '1000000', '--seed', '7', '-o', 'b.db', '--name',
            'big', cwd=tmp)
        run(gmsim, 'sweep', 'b.db', '-p', 'caching,bfc,native,pool', '-j', '2', cwd=tmp)
        run(gmsim, 'report', 'b.runs.db', 'b.db', '-o', 'b.html', cwd=tmp)
        mib = os.path.getsize(os.path.join(tmp, 'b.html')) / 2**20
        check(mib < 10, 'a 1M-event trace\'s report is under 10 MiB (%.2f MiB)' % mib)
        b.open('about:blank')
        t0 = b.task_seconds()
        secs = b.open('file://' + os.path.join(tmp, 'b.html'))
        cpu = b.task_seconds() - t0
        # The main thread's CPU time: the wall time grows with the machine's
        # load (both are printed; scripts/bench reports the wall time).
        check(cpu < 3, 'it opens in under 3 s of the page\'s CPU time (%.2f s; %.2f s of '
              'wall time to its load event)' % (cpu, secs))
        b.scroll_to('#am0')
        b.screenshot(os.path.join(out, 'active-memory-1m.png'), full=False)
        # Any instant of the million events: the first pick decodes every
        # block; both are rebuilt as gmsim walked them at two instants.
        pick = b.eval('(function(){var A=gmsim.spaces["0"],N=A.D.events,t0=performance.now();'
                      'gmsim.pick("0",Math.round(N*0.37));var t1=performance.now();'
                      'gmsim.pick("0",Math.round(N*0.61));var t2=performance.now();'
                      'var ok=[0,5].map(function(j){var I=A.D.instants[j];return I.snaps.map('
                      'function(w,k){var s=gmsim.spaceAt("0",k,I.event);if(!s)return null;'
                      'return JSON.stringify(w.segs.slice().sort(function(x,y){return x[0]-y[0];}))'
                      '===JSON.stringify(s.segs);});});return [A.ev,t1-t0,t2-t1,ok,'
                      'A.snaps.map(function(s){return !!(s&&s.any);})];})()')
        ev, first, second, same, every = pick
        check(len(every) >= 2 and all(every), 'every run of the 1M-event trace is rebuilt at '
              'any instant, none at the nearest walked one (%r)' % every)
        flat = [x for r in same for x in r if x is not None]
        check(flat and all(flat), 'any instant of the 1M-event trace: rebuilt as the walks at '
              'two instants (%r)' % same)
        check(first < 500 and second < 500, 'a pick rebuilds and draws the address space in '
              '%.0f ms, the next (event %d) in %.0f ms' % (first, ev, second))
        # pool keeps touching free blocks of different streams apart: every
        # cut of its run is in the page (no note that a gap may be several
        # blocks), and at walked instants picked on the page the free
        # blocks it draws are gmsim's, one by one.
        k = b.eval('gmsim.spaces["0"].D.runs.map(function(r){return r.label;})').index('pool')
        pool = b.eval('(function(){var A=gmsim.spaces["0"],X=A.D.any[%d];return [X?X.cuts:-1,'
                      'X?X.cut64!==undefined:false,A.fig.querySelector(".asnote").textContent,'
                      'A.fig.querySelector(".note.size").textContent];})()' % k)
        check(pool[0] > 20000 and pool[1] and 'may be several' not in pool[2],
              'the 1M-event pool run carries all its cuts (%d) and no note that a gap may be '
              'several blocks (%r)' % (pool[0], pool[2][-100:]))
        check('cuts' in pool[3], 'the page states the size of the cuts (%r)' % pool[3])
        sides = []
        for j in (3, 8):
            got = b.eval('(function(){var A=gmsim.spaces["0"],I=A.D.instants[%d];gmsim.pick("0",'
                         'I.event);var s=A.snaps[%d],w=I.snaps[%d];function free(segs){var n=0;'
                         'segs.forEach(function(g){for(var i=3;i<g[4].length;i+=4)if(g[4][i-1]<0)'
                         'n++;});return n;}function side(segs){var n=0;segs.forEach(function(g){for(var i=7;'
                         'i<g[4].length;i+=4)if(g[4][i-1]<0&&g[4][i-5]<0)n++;});return n;}'
                         'return [I.event,!!(s&&s.any),free(s.segs),free(w.segs),'
                         'JSON.stringify(s.segs)===JSON.stringify(w.segs.slice().sort(function(x,y)'
                         '{return x[0]-y[0];})),side(w.segs)];})()' % (j, k, k))
            check(got[1] and got[2] == got[3] and got[4],
                  'pool, picked at walked event %d: the page draws its %d free blocks one by one, '
                  'as gmsim\'s walk (%d, %d of them after another free block), block by block'
                  % (got[0], got[2], got[3], got[5]))
            sides.append(got[5])
        check(max(sides) > 0, 'pool: gmsim\'s walks there show free blocks side by side (%r)'
              % sides)
        b.scroll_to('#as0')
        b.screenshot(os.path.join(out, 'doc-space-pool-1m.png'), element='#as0')
        b.scroll_to('#as0')
        b.screenshot(os.path.join(out, 'address-space-1m.png'), full=False)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--gmsim')
    ap.add_argument('--data', default='')
    ap.add_argument('--out')
    ap.add_argument('--big', action='store_true')
    ap.add_argument('--open', metavar='HTML', help='print "open_s S cpu_s C": the seconds '
                    'Chromium takes to load HTML (its second load) and its main thread\'s CPU '
                    'seconds in them, for scripts/bench')
    a = ap.parse_args()
    if cdp.find_chromium() is None:
        print('skipped: chromium is not installed (run \'scripts/deps chromium\')')
        return 77
    if a.open:
        with cdp.Browser(width=WIDTH, height=900) as b:
            url = 'file://' + os.path.abspath(a.open)
            b.open(url)
            b.open('about:blank')
            t0 = b.task_seconds()
            secs = b.open(url)
            cpu = b.task_seconds() - t0
            if b.errors:
                print('errors: %r' % b.errors[:3])
                return 1
        print('open_s %.3f cpu_s %.3f' % (secs, cpu))
        return 0
    if not a.gmsim or not a.out:
        ap.error('--gmsim and --out are required')
    os.makedirs(a.out, exist_ok=True)
    gmsim = os.path.abspath(a.gmsim)
    with cdp.Browser(width=WIDTH, height=900) as b:
        if a.big:
            big(b, gmsim, a.out)
        else:
            small(b, gmsim, a.data, a.out)
        check(not b.errors, 'no error from the page\'s script (%r)' % b.errors[:3])
    print('screenshots in %s' % a.out)
    if failures:
        print('%d check(s) failed' % len(failures))
        return 1
    return 0


if __name__ == '__main__':
    sys.exit(main())
