// Yjs side of `breeze bench all`: N last-writer-wins writes over K keys of a Y.Map (a settings map), each
// write its own transaction and its own update (what a live app ships); a peer document applies every
// update; then W writers (W documents, one client id each) each write one key concurrently and their
// states are merged into one document. In memory only: nothing is persisted.
// usage: node yjs_settings.js [--count N] [--keys K] [--writers W]; prints one JSON object.
'use strict'
// Debian installs node-yjs (and lib0) under /usr/share/nodejs, where a node not from Debian does not look.
process.env.NODE_PATH = [process.env.NODE_PATH, '/usr/share/nodejs'].filter(Boolean).join(':')
require('module').Module._initPaths()
const Y = require('yjs')

function option (name, d) {
  const i = process.argv.indexOf('--' + name)
  if (i < 0) return d
  const n = Number(process.argv[i + 1])
  if (!Number.isInteger(n) || n <= 0) { console.error(`--${name}: expected a positive whole number`); process.exit(2) }
  return n
}
const count = option('count', 100000), keys = option('keys', 100), writers = option('writers', 2000)
const now = () => Number(process.hrtime.bigint()) / 1e9

// 1. Writes: one transaction (and one update) per write.
const doc = new Y.Doc()
const map = doc.getMap('settings')
const updates = []
doc.on('update', u => updates.push(u))
let t0 = now()
for (let i = 0; i < count; i++) map.set('k' + (i % keys), 'v' + i)
const writeSeconds = now() - t0
let wireBytes = 0
for (const u of updates) wireBytes += u.length

// 2. The peer applies every update, in order.
const peer = new Y.Doc()
t0 = now()
for (const u of updates) Y.applyUpdate(peer, u)
const applySeconds = now() - t0
const a = map.toJSON(), b = peer.getMap('settings').toJSON()
if (Object.keys(b).length !== Math.min(keys, count) || Object.keys(a).some(k => a[k] !== b[k])) {
  console.error('yjs: the peer does not hold the writer\'s map'); process.exit(1)
}
const stateBytes = Y.encodeStateAsUpdate(doc).length

// 3. W concurrent writers, each its own document and client id, merged into one.
const states = []
for (let j = 0; j < writers; j++) {
  const d = new Y.Doc()
  d.getMap('settings').set('k' + (j % keys), 'w' + j)
  states.push(Y.encodeStateAsUpdate(d))
}
const merged = new Y.Doc()
t0 = now()
merged.transact(() => { for (const s of states) Y.applyUpdate(merged, s) }) // one transaction: Yjs' batch path
const m = merged.getMap('settings').toJSON()
const mergeSeconds = now() - t0
if (Object.keys(m).length !== Math.min(keys, writers)) { console.error('yjs: merge lost keys'); process.exit(1) }

console.log(JSON.stringify({
  benchmark: 'settings', system: 'Yjs', version: require('yjs/package.json').version, runtime: 'node ' + process.versions.node,
  writes: count, keys, writers,
  writeMicrosPerOp: writeSeconds / count * 1e6,
  wireBytesPerUpdate: wireBytes / updates.length, updates: updates.length,
  peerAppliesPerSecond: count / applySeconds,
  stateBytes, mergeMillis: mergeSeconds * 1000,
  peakRSSMiB: process.resourceUsage().maxRSS / 1024,
  durability: 'in memory (not persisted)'
}))
