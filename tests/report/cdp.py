"""tests/report/cdp.py — a small driver of headless Chromium through the
DevTools protocol over a pipe (--remote-debugging-pipe: JSON messages ended
by a NUL byte, on file descriptors 3 and 4 of the browser), so the report's
browser tests need Python's standard library and Debian's chromium only.

    with Browser(width=1280, height=900) as b:
        b.open('file:///tmp/report.html')
        b.eval('document.title')
        b.mouse('mouseMoved', x, y)
        b.screenshot('build/x.png')
        b.errors          # the page's uncaught exceptions and console errors
"""
import base64
import json
import os
import shutil
import subprocess
import tempfile
import time


def find_chromium():
    """The browser to drive: $GM_CHROMIUM, else chromium on PATH; None."""
    env = os.environ.get('GM_CHROMIUM')
    if env and os.access(env, os.X_OK):
        return env
    for name in ('chromium', 'chromium-browser'):
        path = shutil.which(name)
        if path:
            return path
    return None


class Browser:
    def __init__(self, width=1280, height=900, chromium=None):
        self.chromium = chromium or find_chromium()
        self.width, self.height = width, height
        self.errors = []
        self.events = []
        self.next_id = 0
        self.buf = b''

    def __enter__(self):
        self.profile = tempfile.mkdtemp(prefix='gmsim-chromium-')
        to_browser_r, self.to_browser = os.pipe()
        self.from_browser, from_browser_w = os.pipe()
        # The browser reads commands on fd 3 and writes replies on fd 4.
        def child_fds():
            os.dup2(to_browser_r, 3)
            os.dup2(from_browser_w, 4)
        self.proc = subprocess.Popen(
            [self.chromium, '--headless', '--no-sandbox', '--disable-gpu', '--no-first-run',
             '--no-default-browser-check', '--hide-scrollbars', '--mute-audio',
             '--remote-debugging-pipe', '--user-data-dir=' + self.profile,
             '--window-size=%d,%d' % (self.width, self.height), 'about:blank'],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            preexec_fn=child_fds, close_fds=True,
            # 3 and 4 kept: the close of the other descriptors follows preexec_fn
            pass_fds=(3, 4, to_browser_r, from_browser_w))
        os.close(to_browser_r)
        os.close(from_browser_w)
        targets = self.call('Target.getTargets')['targetInfos']
        page = next(t for t in targets if t['type'] == 'page')
        self.session = self.call('Target.attachToTarget',
                                 {'targetId': page['targetId'], 'flatten': True})['sessionId']
        for domain in ('Page', 'Runtime', 'Log'):
            self.call(domain + '.enable', session=True)
        self.call('Performance.enable', {'timeDomain': 'threadTicks'}, session=True)
        self.call('Emulation.setDeviceMetricsOverride',
                  {'width': self.width, 'height': self.height, 'deviceScaleFactor': 1,
                   'mobile': False}, session=True)
        return self

    def __exit__(self, *exc):
        try:
            self.call('Browser.close', timeout=5)
        except Exception:
            pass
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        os.close(self.to_browser)
        os.close(self.from_browser)
        shutil.rmtree(self.profile, ignore_errors=True)

    def _read(self, deadline):
        while b'\0' not in self.buf:
            if time.time() > deadline:
                raise TimeoutError('chromium did not answer')
            chunk = os.read(self.from_browser, 1 << 20)
            if not chunk:
                raise EOFError('chromium closed the pipe')
            self.buf += chunk
        msg, self.buf = self.buf.split(b'\0', 1)
        return json.loads(msg)

    def _note(self, msg):
        method = msg.get('method', '')
        p = msg.get('params', {})
        if method == 'Runtime.exceptionThrown':
            d = p['exceptionDetails']
            self.errors.append('exception: %s %s' % (
                d.get('text', ''), d.get('exception', {}).get('description', '')))
        elif method == 'Runtime.consoleAPICalled' and p.get('type') == 'error':
            self.errors.append('console.error: %s' % ' '.join(
                str(a.get('value', a.get('description', ''))) for a in p.get('args', [])))
        elif method == 'Log.entryAdded' and p['entry'].get('level') == 'error':
            self.errors.append('log: %s' % p['entry'].get('text', ''))
        self.events.append(method)

    def call(self, method, params=None, session=False, timeout=60):
        self.next_id += 1
        msg = {'id': self.next_id, 'method': method, 'params': params or {}}
        if session:
            msg['sessionId'] = self.session
        os.write(self.to_browser, json.dumps(msg).encode() + b'\0')
        deadline = time.time() + timeout
        while True:
            reply = self._read(deadline)
            if reply.get('id') == self.next_id:
                if 'error' in reply:
                    raise RuntimeError('%s: %s' % (method, reply['error']))
                return reply.get('result', {})
            self._note(reply)

    def wait_event(self, method, timeout=60):
        deadline = time.time() + timeout
        while method not in self.events:
            self._note(self._read(deadline))
        self.events.remove(method)

    def open(self, url, timeout=60):
        """Load url and wait for its load event; returns the seconds taken."""
        t = time.time()
        self.events.clear()
        self.call('Page.navigate', {'url': url}, session=True)
        self.wait_event('Page.loadEventFired', timeout)
        return time.time() - t

    def task_seconds(self):
        """The CPU seconds the page's main thread has spent in tasks (script,
        layout, paint) since the last open: Performance.getMetrics'
        TaskDuration in thread ticks, so a loaded machine does not inflate
        it as it does the wall time."""
        m = self.call('Performance.getMetrics', session=True)['metrics']
        return next(x['value'] for x in m if x['name'] == 'TaskDuration')

    def eval(self, expr):
        r = self.call('Runtime.evaluate', {'expression': expr, 'returnByValue': True},
                      session=True)
        if 'exceptionDetails' in r:
            raise RuntimeError('%s: %s' % (expr[:80], r['exceptionDetails']))
        return r['result'].get('value')

    def mouse(self, kind, x, y, button='none', clicks=0, delta_y=0):
        """A real input event (Input.dispatchMouseEvent): kind mouseMoved,
        mousePressed, mouseReleased or mouseWheel."""
        p = {'type': kind, 'x': x, 'y': y, 'button': button, 'clickCount': clicks}
        if kind == 'mouseWheel':
            p.update({'deltaX': 0, 'deltaY': delta_y})
        if kind in ('mousePressed', 'mouseReleased') or button != 'none':
            p['buttons'] = 1 if kind != 'mouseReleased' else 0
        self.call('Input.dispatchMouseEvent', p, session=True)

    def click(self, x, y, clicks=1):
        self.mouse('mouseMoved', x, y)
        for c in range(1, clicks + 1):
            self.mouse('mousePressed', x, y, 'left', c)
            self.mouse('mouseReleased', x, y, 'left', c)

    def drag(self, x0, y, x1, steps=5):
        self.mouse('mouseMoved', x0, y)
        self.mouse('mousePressed', x0, y, 'left', 1)
        for k in range(1, steps + 1):
            self.mouse('mouseMoved', x0 + (x1 - x0) * k / steps, y, 'left')
        self.mouse('mouseReleased', x1, y, 'left', 1)

    def screenshot(self, path, full=True, element=None, top=None, scale=1):
        """The whole page (full), the window, the box of the element a
        selector names, or the page's top `top` pixels; scaled by scale."""
        params = {'format': 'png'}
        if top:
            w = self.eval('document.documentElement.scrollWidth')
            params.update({'captureBeyondViewport': True,
                           'clip': {'x': 0, 'y': 0, 'width': w, 'height': top, 'scale': scale}})
        elif element:
            x, y, w, h = self.eval('(function(){var r=document.querySelector(%s).getBoundingClientRect();'
                                   'return [r.left+scrollX,r.top+scrollY,r.width,r.height];})()'
                                   % json.dumps(element))
            params['clip'] = {'x': x, 'y': y, 'width': w, 'height': h, 'scale': 1}
        elif full:
            w, h = self.eval('[document.documentElement.scrollWidth,'
                             'document.documentElement.scrollHeight]')
            params.update({'captureBeyondViewport': True,
                           'clip': {'x': 0, 'y': 0, 'width': w, 'height': h, 'scale': 1}})
        data = self.call('Page.captureScreenshot', params, session=True)['data']
        with open(path, 'wb') as f:
            f.write(base64.b64decode(data))

    def scroll_to(self, selector):
        self.eval('document.querySelector(%s).scrollIntoView({block:"center"})'
                  % json.dumps(selector))
