/// The inspector page's scripts (plain JavaScript, no framework): `core` talks to the server (the token, the
/// API, the live event stream), runs the scrubber, the log's timeline, explain and diff; `screens` draws each
/// screen from its read model.
enum InspectorScript {
    static let core = #"""
    'use strict';
    const Q = new URLSearchParams(location.search);
    const TOKEN = Q.get('token') || '';
    const SVGNS = 'http://www.w3.org/2000/svg';
    // What the page shows: `until` null follows the end of the log (live); a number is a replayed point.
    const S = { info: null, until: null, params: {}, db: Q.get('db') === 'b' ? 'b' : 'a', filters: { stream: '', type: '', origin: '' },
                after: { a: null, b: null }, diff: null, busy: false, again: false, updates: 0, selected: null };
    for (const [k, v] of Q) if (!['token', 'until', 'db', 'live'].includes(k) && !k.startsWith('log.')) S.params[k] = v;
    if (Q.has('until') && Q.get('until') !== '') S.until = Number(Q.get('until'));
    for (const f of ['stream', 'type', 'origin']) if (Q.has('log.' + f)) S.filters[f] = Q.get('log.' + f);

    function api(path, params) {
      const u = new URLSearchParams(params || {});
      u.set('token', TOKEN);
      return fetch(path + '?' + u.toString()).then(r => r.json());
    }
    function h(tag, attrs, ...kids) {
      const e = document.createElement(tag);
      for (const [k, v] of Object.entries(attrs || {})) {
        if (v === null || v === undefined) continue;
        if (k.startsWith('on')) e.addEventListener(k.slice(2), v); else e.setAttribute(k, String(v));
      }
      for (const c of kids.flat(9)) if (c !== null && c !== undefined && c !== false) e.append(c instanceof Node ? c : document.createTextNode(String(c)));
      return e;
    }
    function s(tag, attrs, ...kids) {
      const e = document.createElementNS(SVGNS, tag);
      for (const [k, v] of Object.entries(attrs || {})) {
        if (v === null || v === undefined) continue;
        if (k.startsWith('on')) e.addEventListener(k.slice(2), v); else e.setAttribute(k, String(v));
      }
      for (const c of kids.flat(9)) if (c !== null && c !== undefined && c !== false) e.append(c instanceof Node ? c : document.createTextNode(String(c)));
      return e;
    }
    const $ = id => document.getElementById(id);
    const r2 = x => Math.round(x * 100) / 100;
    // Text on a coloured badge: black on light colours (Good green, Moderate yellow), white on dark ones.
    function ink(hex) {
      if (!hex || hex.length < 7) return '#1C1C1E';
      const n = parseInt(hex.slice(1, 7), 16), r = n >> 16, g = (n >> 8) & 255, b = n & 255;
      return (0.299 * r + 0.587 * g + 0.114 * b) > 150 ? '#000000' : '#FFFFFF';
    }
    const GREY = '#AEAEB2';

    // ---- boot and refresh ---------------------------------------------------------------------------------
    async function boot() {
      $('scrub').addEventListener('input', () => { S.until = Number($('scrub').value); label(); schedule(150); });
      $('follow').addEventListener('click', () => { S.until = null; refresh(); });
      $('apply').addEventListener('click', () => {
        for (const k of ['sensor', 'now']) { const v = $('p-' + k).value.trim(); if (v) S.params[k] = v; else delete S.params[k]; }
        S.params.user = $('p-user').value;
        S.db = $('p-db').value;
        refresh();
      });
      for (const f of ['stream', 'type', 'origin']) $('f-' + f).addEventListener('change', () => {
        S.filters[f] = $('f-' + f).value; S.after = { a: null, b: null }; refreshLog();
      });
      await refresh();
      // `live=0`: a still picture (a screenshot, `chromium --dump-dom`), without the event stream that never ends.
      if (Q.get('live') === '0') { document.documentElement.dataset.live = 'off'; return; }
      const es = new EventSource('/api/events?token=' + encodeURIComponent(TOKEN));
      es.addEventListener('log', () => { S.updates++; document.documentElement.dataset.updates = S.updates; refresh(); });
      es.addEventListener('failure', e => { $('live').textContent = 'error: ' + e.data; });
      es.onopen = () => { document.documentElement.dataset.stream = 'open'; };
    }
    let timer = null;
    function schedule(ms) { clearTimeout(timer); timer = setTimeout(refresh, ms); }
    function label() {
      const last = S.info ? S.info[S.db].lastSeq : 0;
      const cut = S.until === null ? last : S.until;
      $('cutlabel').textContent = 'seq ' + cut + ' of ' + last + (S.until === null ? ' (end, live)' : '');
      const live = $('live');
      live.className = 'live' + (S.until === null ? ' on' : '');
      live.textContent = S.until === null ? '● live' : '❚❚ replaying to seq ' + cut;
    }
    // One refresh at a time; a request meanwhile runs once more after it.
    async function refresh() {
      if (S.busy) { S.again = true; return; }
      S.busy = true;
      try {
        S.info = await api('/api/info');
        drawInfo();
        const last = S.info[S.db].lastSeq;
        if (S.until !== null && S.until > last) S.until = last;
        const cut = S.until === null ? last : S.until;
        const q = Object.assign({}, S.params, { until: cut, db: S.db });
        const screens = await api('/api/screens', q);
        drawScreens(screens);
        if (S.info.b) await refreshDiff(); else await refreshLog();
        document.documentElement.dataset.until = screens.until;
        document.documentElement.dataset.lastSeq = last;
        document.documentElement.dataset.rendered = String(Date.now());
      } catch (e) {
        $('live').textContent = 'error: ' + e;
      } finally {
        S.busy = false;
        if (S.again) { S.again = false; refresh(); }
      }
    }
    function drawInfo() {
      const i = S.info, a = i.a;
      $('dbinfo').textContent = 'A ' + a.path + ' · replica ' + a.replica + ' · ' + a.events + ' events'
        + (i.b ? '   |   B ' + i.b.path + ' · replica ' + i.b.replica + ' · ' + i.b.events + ' events' : '');
      const last = i[S.db].lastSeq;
      const sc = $('scrub');
      sc.max = last;
      sc.value = S.until === null ? last : S.until;
      label();
      fill($('p-user'), i.a.users.length ? i.a.users : [i.user], S.params.user || i.user);
      if (i.b && $('p-db').options.length < 2) $('p-db').append(h('option', { value: 'b' }, 'B'));
      $('p-db').value = S.db;
      const streams = Array.from(new Set(i.a.streams.concat(i.b ? i.b.streams : [])));
      const types = Array.from(new Set(i.a.types.concat(i.b ? i.b.types : [])));
      const origins = Array.from(new Set(i.a.origins.concat(i.b ? i.b.origins : [])));
      fill($('f-stream'), streams, S.filters.stream, 'every stream');
      fill($('f-type'), types, S.filters.type, 'every type');
      fill($('f-origin'), origins, S.filters.origin, 'every origin');
    }
    function fill(sel, values, current, empty) {
      const want = (empty !== undefined ? [''] : []).concat(values.slice().sort());
      const have = Array.from(sel.options).map(o => o.value);
      if (want.join('\n') !== have.join('\n')) {
        sel.replaceChildren(...want.map(v => h('option', { value: v }, v === '' ? empty : v)));
      }
      sel.value = current || '';
    }

    // ---- screens ----------------------------------------------------------------------------------------
    function drawScreens(r) {
      const box = $('screens');
      const cards = [];
      for (const [name, entry] of Object.entries(r.screens)) {
        const o = entry.options, m = entry.model;
        if (name === 'sheet' || name === 'detail' || name === 'history') {
          if (!S.params.sensor && o.sensor) $('p-sensor').placeholder = o.sensor;
        }
        if (!S.params.now && o.now && name === 'detail') $('p-now').placeholder = o.now;
        const sec = h('section', { class: 'screen' + (WIDE[name] ? ' wide' : ''), 'data-screen': name, 'data-until': r.until,
                                   'data-options': JSON.stringify(o) },
          h('h2', {}, TITLES[name] || name),
          h('div', { class: 'opts mono' }, Object.entries(o).map(([k, v]) => '--' + k + ' ' + v).join('  ')));
        if (m.error) sec.append(h('div', { class: 'err', 'data-error': m.error }, m.error));
        else {
          try { sec.append(DRAW[name] ? DRAW[name](m, o) : h('pre', { class: 'mono' }, JSON.stringify(m, null, 1))); }
          catch (e) { sec.append(h('div', { class: 'err' }, 'cannot draw: ' + e)); }
        }
        cards.push(sec);
      }
      box.replaceChildren(...cards);
    }
    function explainButton(field, user) {
      return h('span', { class: 'xbtn', title: 'explain ' + field, 'data-explain': field, onclick: () => explain(field, user) }, '?');
    }
    async function explain(field, user) {
      const q = { field: field, db: S.db };
      if (user || S.params.user) q.user = user || S.params.user;
      const r = await api('/api/explain', q);
      const pre = $('explain');
      pre.textContent = r.error ? r.error : r.text.join('\n');
      pre.dataset.field = field;
      $('explain-panel').scrollIntoView({ block: 'nearest' });
    }

    // ---- the log ------------------------------------------------------------------------------------------
    async function refreshLog() {
      const sides = S.info.b ? ['a', 'b'] : ['a'];
      const box = $('timelines');
      const columns = [];
      for (const db of sides) {
        const last = S.info[db].lastSeq;
        const cut = S.until === null ? last : Math.min(S.until, last);
        // Two databases: each timeline opens at its first divergence; one: around the cut.
        const first = S.first && S.first[db];
        const after = S.after[db] !== null ? S.after[db] : first ? Math.max(0, first.seq - 10) : Math.max(0, cut - 60);
        const q = { db: db, after: after, limit: 120 };
        for (const f of ['stream', 'type', 'origin']) if (S.filters[f]) q[f] = S.filters[f];
        const r = await api('/api/log', q);
        const list = h('div', { class: 'tl', 'data-db': db });
        for (const e of (r.events || [])) {
          const cls = ['ev'];
          if (e.seq > cut && db === S.db) cls.push('after');
          if (e.seq === cut) cls.push('cut');
          if (S.selected && S.selected.db === db && S.selected.seq === e.seq) cls.push('sel');
          const only = onlyHere(db, e);
          if (only) cls.push('only');
          list.append(h('div', { class: cls.join(' '), 'data-seq': e.seq, 'data-id': e.id, 'data-type': e.type, 'data-stream': e.stream,
                                 onclick: () => showEvent(db, e.seq) },
            h('span', { class: 'mono' }, e.seq),
            h('span', {}, h('b', {}, e.type), ' ', e.stream, h('br'), h('span', { class: 't mono' }, e.time + ' ' + e.id))));
        }
        if (!r.events || !r.events.length) list.append(h('div', { class: 'muted', style: 'padding:8px' }, r.error || 'no events match'));
        const nav = h('div', { class: 'tlnav' },
          h('button', { class: 'ghost', type: 'button', onclick: () => { S.after[db] = Math.max(0, after - 120); refreshLog(); } }, '◀ earlier'),
          h('button', { class: 'ghost', type: 'button', onclick: () => { S.after[db] = cut; refreshLog(); } }, 'at the cut'),
          h('button', { class: 'ghost', type: 'button', onclick: () => {
            const ev = r.events || []; S.after[db] = ev.length ? ev[ev.length - 1].seq : after; refreshLog(); } }, 'later ▶'));
        columns.push(h('div', { class: 'timeline' }, h('h3', {}, (db === 'a' ? 'A ' : 'B ') + S.info[db].path), list, nav));
      }
      box.replaceChildren(...columns);
      markFirstDivergence();
      for (const c of box.querySelectorAll('.ev.cut, .ev.first-divergence')) c.scrollIntoView({ block: 'nearest' });
    }
    async function showEvent(db, seq) {
      S.selected = { db: db, seq: seq };
      for (const e of document.querySelectorAll('.ev.sel')) e.classList.remove('sel');
      const row = document.querySelector('.tl[data-db="' + db + '"] .ev[data-seq="' + seq + '"]');
      if (row) row.classList.add('sel');
      const e = await api('/api/event', { db: db, seq: seq });
      const pre = $('event');
      pre.replaceChildren();
      pre.dataset.seq = seq;
      if (e.error) { pre.textContent = e.error; return; }
      pre.append(h('div', {}, h('button', { type: 'button', onclick: () => { S.db = db; S.until = seq; refresh(); } }, 'replay to seq ' + seq),
                 ' ', fieldOf(e) ? explainButton(fieldOf(e), e.stream.slice(5)) : ''));
      pre.append(JSON.stringify(e, null, 2));
    }
    // The setting a user event wrote, as `explain` names it.
    function fieldOf(e) {
      if (!e.stream.startsWith('user:') || !e.payload) return null;
      const p = e.payload;
      if (e.type.startsWith('favourite.')) return 'favourite ' + p.sensor;
      if (e.type.startsWith('watch.')) return 'watch ' + p.sensor;
      if (e.type === 'unit.set') return 'unit';
      if (e.type === 'alert.set') return 'alert';
      if (e.type.startsWith('source.') && p.source) return 'source ' + p.source;
      return null;
    }

    // ---- two databases --------------------------------------------------------------------------------------
    async function refreshDiff() {
      const r = await api('/api/diff');
      if (r.error) { $('diff').textContent = r.error; return; }
      S.diff = r.report;
      S.first = r.first;
      const d = S.diff, box = $('diff');
      $('diff-panel').hidden = false;
      box.replaceChildren(h('div', { 'data-same': d.same }, d.same ? 'A and B hold the same events and the same state'
                                                                   : 'A and B differ'));
      for (const st of d.streams || []) {
        box.append(h('div', { class: 'diffstream', 'data-stream': st.stream },
          h('b', {}, st.stream), ': ', st.same ? 'same' : h('span', { class: 'bad' }, 'DIFFERENT'),
          st.onlyA.count ? ' · only in A ' + st.onlyA.count : '', st.onlyB.count ? ' · only in B ' + st.onlyB.count : '',
          st.conflicts.length ? ' · conflicts ' + st.conflicts.length : '',
          st.determinismBug ? h('span', { class: 'bad' }, ' · DETERMINISM BUG after ' + st.determinismBug.agreedAfter + ' events') : ''));
      }
      for (const p of d.projections || []) if (p.determinismBug) box.append(h('div', { class: 'diffstream bad' }, 'projection ' + p.db + ': differs from a fresh replay'));
      for (const db of ['a', 'b']) {
        const f = S.first[db];
        box.append(h('div', { class: 'diffstream', 'data-first': db, 'data-seq': f ? f.seq : '' }, 'first divergence in ' + db.toUpperCase() + ': ',
          f ? h('a', { href: '#', onclick: ev => { ev.preventDefault(); S.after[db] = Math.max(0, f.seq - 10); refreshLog(); } },
                'seq ' + f.seq + ' ' + f.type + ' ' + f.id) : 'none'));
      }
      await refreshLog();
    }
    // True when the event (shown in `db`'s log) is one the other database lacks, by its version vectors.
    function onlyHere(db, e) {
      if (!S.diff || !S.diff.streams) return false;
      const st = S.diff.streams.find(x => x.stream === e.stream);
      if (!st) return true;
      const other = db === 'a' ? st.vectorB : st.vectorA;
      const colon = e.id.lastIndexOf(':');
      const origin = e.id.slice(0, colon), counter = Number(e.id.slice(colon + 1));
      return !((other[origin] || 0) >= counter) || st.conflicts.includes(e.id);
    }
    // `diff`'s first divergence (the server's `first`): in each log, the first event in seq order the other
    // lacks; the events a determinism bug names are marked too.
    function markFirstDivergence() {
      if (!S.diff) return;
      for (const db of ['a', 'b']) {
        const f = S.first && S.first[db];
        const first = f && document.querySelector('.tl[data-db="' + db + '"] .ev[data-seq="' + f.seq + '"]');
        if (first) first.classList.add('first-divergence');
        for (const st of S.diff.streams || []) {
          const bug = st.determinismBug;
          if (!bug) continue;
          for (const x of (db === 'a' ? bug.sinceA : bug.sinceB)) {
            const row = document.querySelector('.tl[data-db="' + db + '"] .ev[data-seq="' + x.seq + '"]');
            if (row) row.classList.add('first-divergence');
          }
        }
      }
    }
    """#
}

extension InspectorScript {
    /// One drawing function per screen (`DRAW[name](model, options)`), each from the read model's fields alone.
    static let screens = #"""
    'use strict';
    const TITLES = { map: 'Map', sheet: 'Sensor sheet', detail: 'Sensor detail', history: 'History', nearby: 'Nearby',
                     alerts: 'Alerts', widgets: 'Widgets', sources: 'Data sources', pollen: 'Allergy Tracker',
                     climate: 'Local Climate Trend', biomarker: 'Biomarker' };
    const WIDE = { map: true, detail: true };
    const ARROW = { rising: '↑', falling: '↓', steady: '→' };
    const CLIMATE = { 'warming-strong': '#FF3B30', warming: '#FF9500', neutral: '#8E8E93', cooling: '#007AFF' };
    const METRICS = [['aqi', 'AQI'], ['temperature', 'Temp'], ['humidity', 'Humidity'], ['pm25', 'PM2.5']];
    const DRAW = {};

    function badge(aqi, colour, extra) {
      return h('span', Object.assign({ class: 'badge', style: 'background:' + (colour || GREY) + ';color:' + ink(colour),
                                       'data-aqi': aqi === undefined || aqi === null ? '' : aqi, 'data-colour': colour || '' }, extra || {}),
               aqi === undefined || aqi === null ? '–' : aqi);
    }
    function select(key, value) { S.params[key] = value; refresh(); }

    // The map: the header in two weights, the metric segment, pins in the EPA colour of their class.
    DRAW.map = (m, o) => {
      const W = 640, H = 300, pad = 30;
      const pins = m.pins;
      let south = Math.min(...pins.map(p => p.latitude)), north = Math.max(...pins.map(p => p.latitude));
      let west = Math.min(...pins.map(p => p.longitude)), east = Math.max(...pins.map(p => p.longitude));
      if (!pins.length) { south = -1; north = 1; west = -1; east = 1; }
      const mid = (south + north) / 2, k = Math.cos(mid * Math.PI / 180) || 1;
      let spanX = Math.max((east - west) * k, 0.02), spanY = Math.max(north - south, 0.02);
      const scale = Math.min((W - 2 * pad) / spanX, (H - 2 * pad) / spanY);
      const cx = (west + east) / 2, cy = mid;
      const x = lon => W / 2 + (lon - cx) * k * scale, y = lat => H / 2 - (lat - cy) * scale;
      const svg = s('svg', { viewBox: '0 0 ' + W + ' ' + H, width: '100%', class: 'map', 'data-pins': pins.length },
        s('rect', { x: 0, y: 0, width: W, height: H, rx: 18, fill: '#E8EEF4' }));
      for (let i = 1; i < 8; i++) svg.append(s('line', { x1: i * W / 8, y1: 0, x2: i * W / 8, y2: H, stroke: '#D5DEE8' }),
                                             s('line', { x1: 0, y1: i * H / 8, x2: W, y2: i * H / 8, stroke: '#D5DEE8' }));
      for (const p of pins) {
        const selected = o.sensor === p.source + ':' + p.sensorId || (S.params.sensor || '') === p.source + ':' + p.sensorId;
        const fill = p.colour || GREY;
        svg.append(s('g', { class: 'pin', 'data-sensor': p.source + ':' + p.sensorId, 'data-label': p.label, 'data-colour': p.colour || '',
                            'data-value': p.value === null || p.value === undefined ? '' : p.value, 'data-stale': p.isStale,
                            style: 'cursor:pointer', onclick: () => select('sensor', p.source + ':' + p.sensorId) },
          s('title', {}, p.name + ' (' + p.source + ':' + p.sensorId + ')' + (p.category ? ' ' + p.category : '') + (p.isStale ? ', stale' : '')),
          selected ? s('circle', { cx: r2(x(p.longitude)), cy: r2(y(p.latitude)), r: 21, fill: 'none', stroke: '#5856D6', 'stroke-width': 3 }) : null,
          s('circle', { cx: r2(x(p.longitude)), cy: r2(y(p.latitude)), r: 16, fill: fill, stroke: '#fff', 'stroke-width': 2,
                        'stroke-dasharray': p.isStale ? '4 3' : null, opacity: p.isStale ? 0.6 : 1 }),
          s('text', { x: r2(x(p.longitude)), y: r2(y(p.latitude)) + 4, 'text-anchor': 'middle', 'font-size': 12, 'font-weight': 700, fill: ink(p.colour) }, p.label),
          s('text', { x: r2(x(p.longitude)), y: r2(y(p.latitude)) + 30, 'text-anchor': 'middle', 'font-size': 10, fill: '#3A3A3C' }, p.name)));
      }
      const seg = h('div', { class: 'segments', style: 'display:flex;gap:6px;margin:6px 0' },
        METRICS.map(([k, t]) => h('span', { class: 'chip' + (m.metric === k ? ' sel' : ''), 'data-metric': k, style: 'cursor:pointer;background:#F2F2F7',
                                          onclick: () => { S.params['map.metric'] = k; refresh(); } }, t)));
      return h('div', {}, h('div', { class: 'title', 'data-title': m.header.title }, m.header.title),
        h('div', { class: 'sub' }, m.header.subtitle, ' ', badge(m.header.badge.aqi, m.header.badge.colour, { 'data-role': 'header' })),
        seg, svg, h('div', { class: 'muted' }, m.pins.length + ' pin' + (m.pins.length === 1 ? '' : 's') + ' · ' + m.unit));
    };

    // The sheet: the round badge, how fresh and how far, the star, the legend.
    DRAW.sheet = (m, o) => {
      const c = m.badge.colour || GREY;
      const svg = s('svg', { viewBox: '0 0 90 90', width: 90, class: 'round-badge', 'data-aqi': m.badge.aqi === undefined ? '' : m.badge.aqi, 'data-colour': m.badge.colour || '' },
        s('circle', { cx: 45, cy: 45, r: 40, fill: c }),
        s('text', { x: 45, y: 52, 'text-anchor': 'middle', 'font-size': 24, 'font-weight': 700, fill: ink(m.badge.colour) }, m.badge.aqi === undefined ? '–' : m.badge.aqi));
      const star = h('span', { class: 'star', 'data-favourite': m.isFavourite, style: 'font-size:26px;color:' + (m.isFavourite ? '#FFCC00' : '#C7C7CC') }, m.isFavourite ? '★' : '☆');
      const legend = h('div', { class: 'legend' }, m.legend.map(l => h('div', { class: 'row', 'data-category': l.category, 'data-current': l.isCurrent,
                                                                       style: l.isCurrent ? 'font-weight:700' : '' },
        h('span', { style: 'width:12px;height:12px;border-radius:6px;background:' + l.colour + ';display:inline-block' }), l.title,
        h('span', { class: 'muted', style: 'margin-left:auto' }, l.low + '–' + l.high))));
      return h('div', {}, h('div', { style: 'display:flex;gap:12px;align-items:center' }, svg,
        h('div', { style: 'flex:1' }, h('div', { class: 'title' }, m.name), h('div', { class: 'muted' }, m.source + ':' + m.sensorId),
          h('div', { class: 'sub', 'data-updated': m.updated ? m.updated.seconds : '' }, (m.updated ? 'updated ' + m.updated.text : 'no reading')
            + (m.distanceKm !== undefined && m.distanceKm !== null ? ' · ' + m.distanceKm + ' km away' : '') + (m.isStale ? ' · stale' : ''))),
        star, explainButton('favourite ' + m.sensorId, o.user)), legend);
    };

    // The detail: the glowing number and where it sits on the scale, the 24 hourly bars, advice, measures.
    DRAW.detail = (m, o) => {
      const W = 640, H = 120, n = m.hourly.length, gap = 4, bw = (W - gap * (n - 1)) / n;
      const max = Math.max(0, ...m.hourly.map(b => b.aqi || 0));
      const top = Math.max(100, Math.floor((max + 49) / 50) * 50);
      const bars = s('svg', { viewBox: '0 0 ' + W + ' ' + (H + 18), width: '100%', class: 'hourly', 'data-top': top, 'data-height': H });
      m.hourly.forEach((b, i) => {
        const x = r2(i * (bw + gap));
        if (b.aqi === undefined || b.aqi === null) {
          bars.append(s('rect', { class: 'bar', x: x, y: H - 3, width: r2(bw), height: 3, fill: '#D1D1D6', 'data-hour': b.hour, 'data-missing': 'true', 'data-aqi': '' }));
        } else {
          const bh = r2(b.aqi / top * H);
          // An hour without a value of its own shows its NowCast faded (an estimate).
          bars.append(s('rect', { class: 'bar', x: x, y: r2(H - bh), width: r2(bw), height: bh, rx: 3, fill: b.colour, 'data-hour': b.hour,
                                  'data-aqi': b.aqi, 'data-colour': b.colour, 'data-category': b.category,
                                  'data-own': b.hasOwnValue ? 'true' : 'false', opacity: b.hasOwnValue ? 1 : 0.45 },
                        s('title', {}, b.hour + ' AQI ' + b.aqi + (b.hasOwnValue ? '' : ' (NowCast; no value of its own)'))));
        }
        if (i % 6 === 0) bars.append(s('text', { x: x, y: H + 14, 'font-size': 10, fill: '#8E8E93' }, b.hour.slice(11, 16)));
      });
      const scale = s('svg', { viewBox: '0 0 300 16', width: 300, class: 'scale', 'data-position': m.scalePosition === undefined ? '' : m.scalePosition });
      const cats = S.info ? S.info.categories : [];
      cats.forEach(c => scale.append(s('rect', { x: r2(c.low / 500 * 300), y: 4, width: r2((c.high - c.low + 1) / 500 * 300), height: 8, fill: c.colour })));
      if (m.scalePosition !== undefined && m.scalePosition !== null) scale.append(s('circle', { cx: r2(m.scalePosition * 300), cy: 8, r: 6, fill: '#fff', stroke: '#1C1C1E', 'stroke-width': 2 }));
      const measure = (label, x) => h('div', { class: 'tile', 'data-measure': label, 'data-value': x.value === undefined ? '' : x.value, 'data-trend': x.trend || '' },
        h('div', { class: 'muted' }, label), h('b', {}, x.value === undefined || x.value === null ? '–' : x.value), ' ', x.unit, ' ', ARROW[x.trend] || '');
      const advice = m.advice ? h('div', { class: 'advice' }, h('div', {}, h('b', {}, m.advice.sensitiveAudience + ': '), m.advice.sensitiveGroups),
                                  h('div', {}, h('b', {}, 'Everyone else: '), m.advice.everyone || m.advice.levelOfConcern)) : h('div', { class: 'muted' }, 'no advice without a NowCast');
      return h('div', {}, h('div', { style: 'display:flex;gap:18px;align-items:center' },
          h('div', { class: 'glow', 'data-aqi': m.aqi === undefined ? '' : m.aqi, 'data-colour': m.colour || '',
                     style: 'font-size:54px;font-weight:800;color:' + (m.colour || GREY) + ';text-shadow:0 0 18px ' + (m.colour || GREY) + '66' }, m.aqi === undefined ? '–' : m.aqi),
          h('div', {}, h('div', { class: 'title' }, m.name), h('div', { class: 'muted' }, (m.category || 'no current reading') + (m.beyondIndex ? ' · Beyond the AQI' : '')
                                                             + ' · correction ' + m.correction + ' · updated ' + (m.updated ? m.updated.time + ' (' + m.updated.text + ')' : 'never')), scale)),
        h('div', { class: 'muted', style: 'margin-top:8px' }, 'Last 24 hours (NowCast AQI; top of the chart ' + top + ')'), bars, advice,
        h('div', { class: 'grid2', style: 'grid-template-columns:1fr 1fr 1fr;margin-top:8px' },
          measure('Temperature', m.temperature), measure('Humidity', m.humidity), measure('PM2.5', m.pm25)),
        h('div', { class: 'muted' }, 'unit ', explainButton('unit', o.user)));
    };

    // History: this week's daily highs beside last week's, and today's PM2.5 to drag through.
    DRAW.history = (m, o) => {
      const W = 320, H = 110;
      const all = m.thisWeek.concat(m.lastWeek).map(d => d.aqi || 0);
      const top = Math.max(100, Math.floor((Math.max(0, ...all) + 49) / 50) * 50);
      const weeks = s('svg', { viewBox: '0 0 ' + W + ' ' + (H + 16), width: '100%', class: 'weeks', 'data-top': top, 'data-height': H });
      const gw = W / 7;
      m.thisWeek.forEach((d, i) => {
        const last = m.lastWeek[i];
        for (const [day, dx, week] of [[last, 4, 'last'], [d, gw / 2, 'this']]) {
          if (!day) continue;
          const v = day.aqi;
          const bh = v === undefined || v === null ? 0 : r2(v / top * H);
          weeks.append(s('rect', { class: 'day', 'data-week': week, 'data-date': day.date, 'data-aqi': v === undefined ? '' : v, 'data-colour': day.colour || '',
                                   x: r2(i * gw + dx), y: r2(H - bh), width: r2(gw / 2 - 6), height: bh, rx: 3,
                                   fill: week === 'this' ? (day.colour || GREY) : '#C7C7CC' }, s('title', {}, week + ' week ' + day.date + ' AQI ' + (v === undefined ? '–' : v))));
        }
        weeks.append(s('text', { x: r2(i * gw + gw / 2), y: H + 13, 'text-anchor': 'middle', 'font-size': 10, fill: '#8E8E93' }, d.weekday));
      });
      const T = 320, TH = 80, pts = m.today.filter(p => p.pm25 !== undefined && p.pm25 !== null);
      const pmax = Math.max(1, ...pts.map(p => p.pm25));
      const px = hr => r2(hr / 23 * (T - 10) + 5), py = v => r2(TH - v / pmax * (TH - 10));
      const area = s('svg', { viewBox: '0 0 ' + T + ' ' + (TH + 14), width: '100%', class: 'today', 'data-points': pts.length });
      if (pts.length) {
        area.append(s('path', { d: 'M' + px(pts[0].localHour) + ',' + TH + ' ' + pts.map(p => 'L' + px(p.localHour) + ',' + py(p.pm25)).join(' ')
                                   + ' L' + px(pts[pts.length - 1].localHour) + ',' + TH + ' Z', fill: '#5856D633', stroke: '#5856D6' }));
      }
      const readout = h('div', { class: 'muted', 'data-readout': '' }, pts.length ? 'drag through today: ' + pts[pts.length - 1].pm25 + ' µg/m³ at ' + pts[pts.length - 1].localHour + ':00' : 'no PM2.5 today');
      for (const p of pts) area.append(s('circle', { class: 'pt', cx: px(p.localHour), cy: py(p.pm25), r: 2.5, fill: '#5856D6', 'data-hour': p.localHour, 'data-pm25': p.pm25 }));
      area.addEventListener('mousemove', ev => {
        const b = area.getBoundingClientRect(), hr = Math.round((ev.clientX - b.left) / b.width * 23);
        const p = pts.reduce((a, q) => Math.abs(q.localHour - hr) < Math.abs(a.localHour - hr) ? q : a, pts[0]);
        if (p) readout.textContent = p.pm25 + ' µg/m³ at ' + p.localHour + ':00 (' + m.timeZone + ')';
      });
      return h('div', {}, h('div', { class: 'title' }, m.name), h('div', { class: 'muted' }, 'Daily highs: this week (colour) and last week (grey)'), weeks,
               h('div', { class: 'muted' }, "Today's PM2.5 (µg/m³, " + m.timeZone + ')'), area, readout);
    };

    // Nearby: the closest sensor, the rest, the favourites with their trend arrows.
    DRAW.nearby = (m, o) => {
      const row = (e, kind) => h('div', { class: 'row', 'data-kind': kind, 'data-sensor': e.source + ':' + e.sensorId, 'data-aqi': e.aqi === undefined ? '' : e.aqi },
        badge(e.aqi, e.colour), h('span', {}, e.name), e.trend ? h('span', { 'data-trend': e.trend, title: e.trend }, ARROW[e.trend] || '') : '',
        h('span', { class: 'muted', style: 'margin-left:auto' }, e.distanceKm !== undefined && e.distanceKm !== null ? e.distanceKm + ' km' : ''));
      return h('div', {}, m.closest ? h('div', {}, h('div', { class: 'muted' }, 'Closest'), row(m.closest, 'closest')) : h('div', { class: 'muted' }, 'no sensor nearby'),
        m.others.length ? h('div', { class: 'muted' }, 'Others') : '', m.others.map(e => row(e, 'other')),
        h('div', { class: 'muted' }, 'Favourites'), m.favourites.length ? m.favourites.map(e => row(e, 'favourite')) : h('div', { class: 'muted' }, 'none'));
    };

    // Alerts: the category that warns, what happens when it clears, the watched sensors, the alerts sent.
    DRAW.alerts = (m, o) => {
      const cats = S.info ? S.info.categories : [];
      return h('div', {},
        h('div', { class: 'muted' }, 'Warn me from ', explainButton('alert category', o.user)),
        h('div', { style: 'display:flex;flex-wrap:wrap;gap:4px' }, cats.map(c => h('span', { class: 'chip' + (c.category === m.threshold.name ? ' sel' : ''),
          'data-category': c.category, 'data-selected': c.category === m.threshold.name, style: 'background:' + c.colour + ';color:' + ink(c.colour) }, c.title))),
        h('div', { class: 'row' }, 'When it clears: ', h('b', { 'data-on-clear': m.onClear }, m.onClear), explainButton('alert on-clear', o.user)),
        h('div', { class: 'row' }, 'Alerts ', h('span', { class: 'switch' + (m.enabled ? ' on' : ''), 'data-enabled': m.enabled }), explainButton('alert enabled', o.user)),
        h('div', { class: 'muted' }, 'Watched'), m.watched.length ? m.watched.map(w => h('div', { class: 'row', 'data-watched': w.source + ':' + w.sensorId },
          badge(w.aqi, w.colour), w.name, w.isStale ? h('span', { class: 'muted' }, 'stale') : '', explainButton('watch ' + w.sensorId, o.user))) : h('div', { class: 'muted' }, 'none'),
        h('div', { class: 'muted' }, 'Alerts ' + m.windowStart.slice(0, 16) + ' – ' + m.windowEnd.slice(0, 16)),
        m.events.length ? m.events.map(e => h('div', { class: 'row', 'data-alert': e.kind }, badge(e.aqi, null), e.kind + ' ' + e.sensorId + ' ' + e.hour + (e.notified ? ' (notified)' : ''))) : h('div', { class: 'muted' }, 'no alert in the window'),
        m.testAlert ? h('div', { class: 'row' }, 'Test alert: ' + JSON.stringify(m.testAlert)) : '');
    };

    // Widgets: the Lock Screen, a Live Activity, a tile coloured by its reading.
    DRAW.widgets = (m, o) => {
      const l = m.lockScreen, a = m.liveActivity, t = m.tile;
      const lock = l ? s('svg', { viewBox: '0 0 80 80', width: 80, class: 'lock', 'data-aqi': l.aqi === undefined ? '' : l.aqi, 'data-colour': l.colour || '' },
        s('circle', { cx: 40, cy: 40, r: 34, fill: 'none', stroke: '#3A3A3C', 'stroke-width': 6 }),
        s('circle', { cx: 40, cy: 40, r: 34, fill: 'none', stroke: l.colour || GREY, 'stroke-width': 6, 'stroke-dasharray': r2(Math.min(1, (l.aqi || 0) / 500) * 213.6) + ' 213.6', transform: 'rotate(-90 40 40)' }),
        s('text', { x: 40, y: 46, 'text-anchor': 'middle', 'font-size': 20, 'font-weight': 700 }, l.aqi === undefined ? '–' : l.aqi)) : h('span', { class: 'muted' }, 'no lock-screen reading');
      const rec = (a && a.recent) || [], rmax = Math.max(50, ...rec.map(v => v || 0));
      const spark = s('svg', { viewBox: '0 0 120 30', width: 120, class: 'spark' });
      rec.forEach((v, i) => { if (v !== null && v !== undefined) spark.append(s('rect', { x: i * 30 + 4, y: r2(30 - v / rmax * 28), width: 22, height: r2(v / rmax * 28), rx: 2, fill: a.colour || GREY, 'data-aqi': v })); });
      return h('div', { class: 'grid2' },
        h('div', { class: 'tile', style: 'background:#1C1C1E;color:#fff', 'data-widget': 'lock' }, lock, h('div', {}, l ? l.name : '')),
        h('div', { class: 'tile', 'data-widget': 'tile', 'data-background': t ? t.background : '', style: t ? 'background:' + t.background + ';color:' + t.foreground : '' },
          h('div', { style: 'font-size:34px;font-weight:800' }, t ? t.label : '–'), h('div', {}, t ? t.title : 'no reading')),
        a ? h('div', { class: 'tile', style: 'grid-column:span 2;display:flex;gap:10px;align-items:center', 'data-widget': 'live' },
          badge(a.aqi, a.colour), h('span', {}, a.name, ' ', ARROW[a.trend] || ''), spark) : '');
    };

    // Data sources and corrections.
    DRAW.sources = (m, o) => h('div', {}, m.sources.map(x => h('div', { class: 'row', 'data-source': x.id, 'data-enabled': x.enabled },
      h('span', { class: 'switch' + (x.enabled ? ' on' : '') }), h('b', {}, x.name), h('span', { class: 'muted' }, x.sensorCount + ' sensors'),
      h('span', { style: 'margin-left:auto', class: 'chip', 'data-correction': x.correction }, x.correction), explainButton('source ' + x.id, o.user))));

    // Pollen: the two-column grid of cards, and the index scale.
    DRAW.pollen = (m, o) => {
      if (m.isEmpty) return h('div', { class: 'muted' }, 'No pollen data available');
      const card = it => h('div', { class: 'tile', 'data-pollen': it.id, 'data-value': it.value === undefined ? '' : it.value, 'data-colour': it.colour || '' },
        h('div', { style: 'display:flex' }, h('b', {}, it.name), h('span', { style: 'margin-left:auto;font-weight:800;color:' + (it.colour || GREY) }, it.value === undefined ? '–' : it.value)),
        h('div', { class: 'bar-bg' }, h('div', { class: 'bar-fg', style: 'width:' + ((it.value || 0) / 5 * 100) + '%;background:' + (it.colour || GREY) })),
        h('div', { class: 'muted' }, it.category || (it.inSeason === false ? 'out of season' : '–')));
      const scale = h('div', { class: 'scale' }, m.scale.map(r => h('div', { class: 'row', 'data-level': r.value, 'data-active': r.isActive,
                                                                 style: r.isActive ? 'background:' + (r.colour || '#E5E5EA') + '22;font-weight:700' : '' },
        h('span', { style: 'width:10px;height:10px;border-radius:5px;display:inline-block;background:' + (r.colour || '#E5E5EA') }), r.level,
        h('span', { class: 'muted', style: 'margin-left:auto' }, r.range))));
      return h('div', {}, h('div', { class: 'muted' }, m.attribution + ' · ' + m.date + (m.regionCode ? ' · ' + m.regionCode : '')),
               h('div', { class: 'grid2' }, m.items.map(card)), h('div', { class: 'muted', style: 'margin-top:6px' }, 'Pollen index scale'), scale);
    };

    // Climate: the mean maximum around this day across decades (in the user's unit: displayTemperature), bars
    // coloured by the change since the baseline; an empty state shows its message.
    DRAW.climate = (m, o) => {
      const W = 340, H = 130, d = m.data, n = d.length || 1, bw = W / n - 6;
      const lo = Math.min(...d.map(p => p.displayTemperature)), hi = Math.max(...d.map(p => p.displayTemperature));
      const base = lo - Math.max(1, (hi - lo) * 0.5), span = Math.max(0.1, hi - base);
      const svg = s('svg', { viewBox: '0 0 ' + W + ' ' + (H + 30), width: '100%', class: 'climate', 'data-unit': m.unit });
      d.forEach((p, i) => {
        const bh = r2((p.displayTemperature - base) / span * H), x = r2(i * (bw + 6) + 3);
        svg.append(s('rect', { class: 'year', x: x, y: r2(H + 14 - bh), width: r2(bw), height: bh, rx: 4, fill: CLIMATE[p.barClass] || GREY,
                               'data-year': p.year, 'data-temperature': p.displayTemperature, 'data-class': p.barClass }),
                   s('text', { x: r2(x + bw / 2), y: r2(H + 10 - bh), 'text-anchor': 'middle', 'font-size': 9, fill: '#6E6E73' }, p.displayTemperature.toFixed(1)),
                   s('text', { x: r2(x + bw / 2), y: H + 27, 'text-anchor': 'middle', 'font-size': 9, fill: '#6E6E73' }, String(p.year)));
      });
      const change = m.change === undefined ? h('div', { class: 'muted', 'data-status': m.status }, m.message || '')
        : h('div', { class: 'row' }, 'Change since ' + m.baselineYear, h('b', { style: 'margin-left:auto;font-size:20px;color:' + (m.change > 0 ? '#FF3B30' : '#007AFF'),
            'data-change': m.change }, (m.change > 0 ? '+' : '') + m.change.toFixed(1) + m.unit));
      return h('div', {}, h('div', { class: 'muted' }, 'Mean maximum around ' + m.date + ' (±' + m.windowDaysEachSide + ' days) across decades · ' + (m.station || 'no station') + ' · ', m.unit, ' ', explainButton('unit', o.user)),
        change, svg);
    };

    // Biomarker: readings today against the daily target, as a gauge.
    DRAW.biomarker = (m, o) => h('div', { class: 'grid2' }, m.biomarkers.map(b => {
      const R = 50, C = 2 * Math.PI * R * 0.75, p = Math.max(0, Math.min(1, b.progress));
      const g = s('svg', { viewBox: '0 0 140 120', width: 150, class: 'gauge', 'data-type': b.readingType, 'data-progress': b.progress,
                           'data-count': b.readingCount, 'data-max': b.maxReading },
        s('circle', { cx: 70, cy: 65, r: R, fill: 'none', stroke: '#D1D1D6', 'stroke-width': 10, 'stroke-dasharray': r2(C) + ' 400', 'stroke-linecap': 'round', transform: 'rotate(135 70 65)' }),
        s('circle', { class: 'progress', cx: 70, cy: 65, r: R, fill: 'none', stroke: '#FF3B30', 'stroke-width': 10, 'stroke-dasharray': r2(C * p) + ' 400', 'stroke-linecap': 'round', transform: 'rotate(135 70 65)' }),
        s('text', { x: 70, y: 62, 'text-anchor': 'middle', 'font-size': 22, 'font-weight': 700 }, String(b.readingCount)),
        s('text', { x: 70, y: 82, 'text-anchor': 'middle', 'font-size': 12, fill: '#8E8E93' }, '/' + b.maxReading));
      return h('div', { class: 'tile', style: 'text-align:center;border:3px solid #D1D1D6' }, g, h('div', {}, h('b', {}, b.readingType)),
        h('div', { class: 'muted' }, 'At least ' + b.maxReading + 'x/day' + (b.hasTarget ? '' : ' (default target)')),
        h('div', { class: 'muted' }, b.latestValue !== undefined ? 'latest ' + b.latestValue + ' ' + (b.unit || '') : ''),
        explainButton('target ' + b.readingType, o.user));
    }), h('div', { class: 'muted', style: 'grid-column:span 2' }, m.date + ' · user ' + m.user));
    """#
}
