/// The inspector's page, served whole at `/`: one HTML document with its style and scripts inline. Nothing is
/// fetched from elsewhere (no framework, font or map tiles); it asks its own server for JSON (`/api/...`,
/// the token carried on from its own address) and draws every screen in SVG.
///
/// What the drawing carries for tests and tools: each screen is a `section[data-screen=NAME]`; each drawn
/// value carries the value of the read model it was drawn from (`data-aqi`, `data-colour`, `data-value`, ...),
/// and `<html>` carries `data-until` (the seq the screens were replayed to), `data-last-seq` and
/// `data-updates` (live updates received).
public enum InspectorPage {
    /// The HTML document.
    public static var html: String {
        """
        <!doctype html>
        <html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
        <title>Breeze inspector</title><style>\(style)</style></head>
        <body>
        <header class="top">
          <div class="brand"><b>Breeze</b> inspector</div>
          <div id="dbinfo" class="muted"></div>
          <div id="live" class="live" title="live: the page follows the database"></div>
        </header>
        <section class="controls">
          <div class="scrubber">
            <label for="scrub">replay to</label>
            <input type="range" id="scrub" min="0" max="0" value="0" step="1">
            <span id="cutlabel" class="mono"></span>
            <button id="follow" type="button" title="follow the end of the log">end of log</button>
          </div>
          <div class="params">
            <label>user <select id="p-user"></select></label>
            <label>sensor <input id="p-sensor" size="18" placeholder="source:id"></label>
            <label>now <input id="p-now" size="21" placeholder="ISO 8601"></label>
            <label>screens of <select id="p-db"><option value="a">A</option></select></label>
            <button id="apply" type="button">apply</button>
          </div>
        </section>
        <main>
          <div id="screens" class="screens"></div>
          <aside class="side">
            <section class="panel" id="explain-panel"><h2>Explain</h2><p class="muted">Click <span class="xbtn">?</span> beside a
              setting: which events decided it, which won and why.</p><pre id="explain" class="mono"></pre></section>
            <section class="panel" id="diff-panel" hidden><h2>Diff</h2><div id="diff"></div></section>
            <section class="panel"><h2>Log</h2>
              <div class="filters">
                <select id="f-stream"><option value="">every stream</option></select>
                <select id="f-type"><option value="">every type</option></select>
                <select id="f-origin"><option value="">every origin</option></select>
              </div>
              <div class="timelines" id="timelines"></div>
              <pre id="event" class="mono event"></pre>
            </section>
          </aside>
        </main>
        <script>\(InspectorScript.core)</script>
        <script>\(InspectorScript.screens)</script>
        <script>boot();</script>
        </body></html>
        """
    }

    static let style = #"""
    :root { --bg:#F2F2F7; --card:#fff; --ink:#1C1C1E; --muted:#6E6E73; --line:#E5E5EA; --accent:#5856D6; }
    * { box-sizing:border-box; }
    body { margin:0; font:14px/1.4 -apple-system, "Segoe UI", Roboto, "DejaVu Sans", sans-serif; background:var(--bg); color:var(--ink); }
    .mono { font-family:"DejaVu Sans Mono", Menlo, monospace; font-size:12px; }
    .muted { color:var(--muted); }
    header.top { display:flex; gap:16px; align-items:center; padding:10px 18px; background:#fff; border-bottom:1px solid var(--line); }
    .brand { font-size:18px; }
    .live { margin-left:auto; font-size:12px; padding:3px 10px; border-radius:12px; background:#E5E5EA; }
    .live.on { background:#D1FADF; color:#05603A; }
    .controls { padding:10px 18px; display:flex; flex-wrap:wrap; gap:10px 24px; align-items:center; }
    .scrubber { display:flex; align-items:center; gap:10px; flex:1 1 520px; }
    .scrubber input { flex:1; accent-color:var(--accent); }
    .params { display:flex; gap:10px; flex-wrap:wrap; align-items:center; }
    .params input, .params select, .filters select { font:inherit; padding:3px 6px; border:1px solid var(--line); border-radius:8px; background:#fff; }
    button { font:inherit; border:0; border-radius:14px; padding:4px 12px; background:var(--accent); color:#fff; cursor:pointer; }
    button.ghost { background:#fff; color:var(--accent); border:1px solid var(--line); }
    main { display:flex; gap:16px; padding:0 18px 18px; align-items:flex-start; }
    .screens { flex:1 1 auto; display:grid; grid-template-columns:repeat(auto-fill, minmax(340px, 1fr)); gap:14px; }
    .side { flex:0 0 440px; display:flex; flex-direction:column; gap:14px; position:sticky; top:8px; }
    .screen, .panel { background:var(--card); border-radius:28px; padding:16px 18px; box-shadow:0 1px 2px rgba(0,0,0,.06); min-width:0; }
    .screen h2, .panel h2 { margin:0 0 2px; font-size:15px; }
    .screen .opts { color:var(--muted); font-size:11px; margin-bottom:8px; word-break:break-all; }
    .screen .err { color:#B42318; font-size:13px; }
    .screen.wide { grid-column:span 2; }
    .title { font-size:20px; font-weight:700; }
    .sub { color:var(--muted); }
    .row { display:flex; align-items:center; gap:10px; padding:5px 0; border-bottom:1px solid var(--line); }
    .row:last-child { border-bottom:0; }
    .badge { display:inline-flex; align-items:center; justify-content:center; min-width:38px; height:26px; border-radius:13px; padding:0 8px; font-weight:700; }
    .chip { border-radius:14px; padding:3px 10px; border:2px solid transparent; font-size:12px; }
    .chip.sel { border-color:var(--accent); }
    .switch { display:inline-block; width:34px; height:20px; border-radius:10px; background:#D1D1D6; position:relative; vertical-align:middle; }
    .switch.on { background:var(--accent); }
    .switch::after { content:""; position:absolute; top:2px; left:2px; width:16px; height:16px; border-radius:8px; background:#fff; }
    .switch.on::after { left:16px; }
    .grid2 { display:grid; grid-template-columns:1fr 1fr; gap:8px; }
    .tile { border-radius:18px; padding:10px; background:var(--bg); }
    .bar-bg { height:6px; border-radius:4px; background:#E5E5EA; overflow:hidden; }
    .bar-fg { height:6px; border-radius:4px; }
    .xbtn { display:inline-block; width:18px; height:18px; line-height:18px; text-align:center; border-radius:9px; background:#EEF; color:var(--accent); font-size:11px; cursor:pointer; font-weight:700; }
    .filters { display:flex; gap:6px; margin:6px 0; flex-wrap:wrap; }
    .timelines { display:flex; gap:8px; }
    .timeline { flex:1; min-width:0; }
    .timeline h3 { font-size:12px; margin:4px 0; word-break:break-all; }
    .tl { max-height:340px; overflow:auto; border:1px solid var(--line); border-radius:12px; }
    .ev { display:grid; grid-template-columns:48px 1fr; gap:2px 6px; padding:3px 8px; border-bottom:1px solid var(--line); cursor:pointer; font-size:12px; }
    .ev:hover { background:#F5F5FF; }
    .ev.after { opacity:.45; }
    .ev.cut { box-shadow:inset 3px 0 0 var(--accent); }
    .ev.only { background:#FEF3F2; }
    .ev.first-divergence { background:#FECDCA; outline:2px solid #D92D20; }
    .ev.sel { background:#EEF; }
    .ev .t { color:var(--muted); }
    .tlnav { display:flex; justify-content:space-between; margin-top:4px; }
    pre.event, pre#explain { white-space:pre-wrap; word-break:break-all; max-height:320px; overflow:auto; margin:6px 0 0; }
    .diffstream { font-size:12px; padding:3px 0; }
    .diffstream .bad { color:#B42318; font-weight:700; }
    svg text { font-family:-apple-system, "Segoe UI", Roboto, "DejaVu Sans", sans-serif; }
    """#
}
