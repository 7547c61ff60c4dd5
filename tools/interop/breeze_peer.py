#!/usr/bin/env python3
"""breeze_peer.py: an independent Breeze sync peer, as an interoperability check of the specification.

Written from Protocol/sync.md, Protocol/encoding.md and Protocol/golden/ ONLY (no Breeze source was read for
the protocol; the key, certificate and authority file formats come from sync.md 4.9, the key file's also from
Sources/BreezeStore/KeyFile.swift's doc comment). If this script interoperates with a real
`breeze node`, the claim "an implementation written from the spec alone interoperates" holds for the parts it
exercises.

Primitives: Python's stdlib (hashlib.blake2b, hmac, struct, socket) and libsodium through ctypes for X25519,
ChaCha20-Poly1305 (IETF) and Ed25519. No crypto is written by hand (CRC-32C is a checksum, not crypto).

    breeze_peer.py selftest
    breeze_peer.py sync --address HOST:PORT --key DB.key --cert DEVICE.cert --authority AUTH.pub \
                        [--favourite SENSOR] [--expect-favourite SENSOR]... [--packed] [--timeout S]
"""
import argparse, ctypes, ctypes.util, hashlib, hmac, json, os, re, select, socket, struct, sys, time
from dataclasses import dataclass, field

MASK64 = (1 << 64) - 1
MAX_FRAME = 4 * 1024 * 1024
MAX_FRAME_BEFORE_AUTH = 64 * 1024      # sync.md 11, "Bounds that protect a node"
VERSION = 3

# ---------------------------------------------------------------------------------------------- libsodium
def _load_sodium():
    for name in ("libsodium.so.23", ctypes.util.find_library("sodium")):
        if not name:
            continue
        try:
            lib = ctypes.CDLL(name)
            break
        except OSError:
            continue
    else:
        sys.exit("breeze_peer: libsodium not found (apt-get install libsodium23)")
    if lib.sodium_init() < 0:
        sys.exit("breeze_peer: sodium_init failed")
    return lib

_na = _load_sodium()
_buf = ctypes.create_string_buffer
_ull = ctypes.c_ulonglong

def x25519_base(sk):
    out = _buf(32)
    _na.crypto_scalarmult_curve25519_base(out, sk)
    return out.raw

def x25519(sk, pk):
    out = _buf(32)
    if _na.crypto_scalarmult_curve25519(out, sk, pk) != 0:      # libsodium refuses an all-zero result
        raise AuthError("X25519 with a public key of small order")
    return out.raw

def _nonce(n):
    return bytes(4) + struct.pack("<Q", n)

def aead_encrypt(k, n, ad, p):
    out, outlen = _buf(len(p) + 16), _ull()
    _na.crypto_aead_chacha20poly1305_ietf_encrypt(out, ctypes.byref(outlen), p, _ull(len(p)), ad, _ull(len(ad)),
                                                  None, _nonce(n), k)
    return out.raw[:outlen.value]

def aead_decrypt(k, n, ad, c):
    """The plaintext, or None when the tag does not verify."""
    if len(c) < 16:
        return None
    out, outlen = _buf(max(1, len(c) - 16)), _ull()
    rc = _na.crypto_aead_chacha20poly1305_ietf_decrypt(out, ctypes.byref(outlen), None, c, _ull(len(c)), ad,
                                                       _ull(len(ad)), _nonce(n), k)
    return None if rc != 0 else out.raw[:outlen.value]

def ed_keypair(seed):
    pk, sk = _buf(32), _buf(64)
    _na.crypto_sign_seed_keypair(pk, sk, seed)
    return pk.raw, sk.raw

def ed_sign(sk, msg):
    sig = _buf(64)
    _na.crypto_sign_detached(sig, None, msg, _ull(len(msg)), sk)
    return sig.raw

def ed_verify(pk, msg, sig):
    return len(sig) == 64 and _na.crypto_sign_verify_detached(sig, msg, _ull(len(msg)), pk) == 0

def ed_pk_to_x25519(pk):
    out = _buf(32)
    if _na.crypto_sign_ed25519_pk_to_curve25519(out, pk) != 0:
        raise AuthError("certificate key is not a valid Ed25519 point")
    return out.raw

def ed_sk_to_x25519(sk):
    out = _buf(32)
    _na.crypto_sign_ed25519_sk_to_curve25519(out, sk)
    return out.raw

def blake2b(data, size=64):
    return hashlib.blake2b(data, digest_size=size).digest()

# ---------------------------------------------------------------------------------------------- errors
class ProtocolError(Exception):
    code = 1
class Malformed(ProtocolError):
    code = 1
class Unexpected(ProtocolError):
    code = 2
class VersionError(ProtocolError):
    code = 3
class AuthError(ProtocolError):
    code = 4
class Forbidden(ProtocolError):
    code = 5
class PeerError(Exception):
    """The peer sent `error` (sync.md 8)."""

ERROR_NAMES = {1: "malformed", 2: "unexpected", 3: "version", 4: "authentication", 5: "forbidden", 6: "timeout",
               7: "shutdown", 8: "storage", 9: "exhausted"}

# ---------------------------------------------------------------------------------------------- primitives
def crc32c(data):
    """CRC-32C (Castagnoli), reflected polynomial 0x82F63B78, init and final XOR 0xFFFFFFFF (sync.md 2)."""
    crc = 0xFFFFFFFF
    for b in data:
        crc = _CRC_TABLE[(crc ^ b) & 0xFF] ^ (crc >> 8)
    return crc ^ 0xFFFFFFFF

def _crc_table():
    t = []
    for i in range(256):
        c = i
        for _ in range(8):
            c = (c >> 1) ^ 0x82F63B78 if c & 1 else c >> 1
        t.append(c)
    return t
_CRC_TABLE = _crc_table()

def varint(n):
    assert 0 <= n <= MASK64
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)

def zz(n):              # n: signed 64-bit -> its zigzag form
    return ((n << 1) ^ (n >> 63)) & MASK64

def zigzag(n):
    return varint(zz(n))

def signed64(u):
    return u - (1 << 64) if u >= 1 << 63 else u

def string(s):
    b = s.encode("utf-8")
    return varint(len(b)) + b

def blob(b):
    return varint(len(b)) + bytes(b)

def u16(n): return struct.pack("<H", n)
def u32(n): return struct.pack("<I", n)
def u64(n): return struct.pack("<Q", n)

class Reader:
    """Decodes the primitive types of encoding.md 1; every violation is Malformed."""
    def __init__(self, data):
        self.d, self.i = bytes(data), 0

    def left(self):
        return len(self.d) - self.i

    def take(self, n):
        if n > self.left():
            raise Malformed("truncated")
        self.i += n
        return self.d[self.i - n:self.i]

    def u8(self): return self.take(1)[0]
    def u16(self): return struct.unpack("<H", self.take(2))[0]
    def u32(self): return struct.unpack("<I", self.take(4))[0]
    def u64(self): return struct.unpack("<Q", self.take(8))[0]

    def varint(self):
        value = shift = 0
        for n in range(10):
            b = self.u8()
            if n == 9 and b > 1:
                raise Malformed("varint does not fit in 64 bits")
            value |= (b & 0x7F) << shift
            shift += 7
            if not b & 0x80:
                if b == 0 and n > 0:
                    raise Malformed("varint not in its shortest form")
                return value
        raise Malformed("varint longer than 10 bytes")

    def zigzag(self):
        u = self.varint()
        return (u >> 1) ^ -(u & 1)

    def bytes(self):
        return self.take(self.varint())

    def string(self):
        try:
            return self.bytes().decode("utf-8")
        except UnicodeDecodeError:
            raise Malformed("invalid UTF-8")

    def count(self):
        n = self.varint()
        if n > self.left():
            raise Malformed("list count larger than the bytes left")
        return n

    def end(self):
        if self.left():
            raise Malformed("trailing bytes")

# ---------------------------------------------------------------------------------------------- events
STREAM_RE = re.compile(r"(public|(sensor|pollen|climate|user|health):[A-Za-z0-9._-]{1,64})", re.ASCII)
FACT_PREFIXES = ("sensor:", "pollen:", "climate:")

def valid_stream(s):
    return STREAM_RE.fullmatch(s) is not None

@dataclass
class Event:
    replica: int
    epoch: int
    counter: int
    hlc: int
    stream: str
    type: str
    schema: int
    payload: bytes

    def body(self):
        return (b"\x01" + u64(self.replica) + varint(self.epoch) + varint(self.counter) + u64(self.hlc) +
                string(self.stream) + string(self.type) + varint(self.schema) + blob(self.payload))

    def encode(self):
        b = self.body()
        return b + blake2b(b, 16)

    def id(self):
        return f"{self.replica:016x}.{self.epoch}:{self.counter}"

def decode_event(data):
    """encoding.md 4: every rule a decoder MUST check."""
    if len(data) > 1 << 20:
        raise Malformed("event larger than 1 MiB")
    r = Reader(data)
    if r.u8() != 1:
        raise Malformed("event format is not 1")
    e = Event(r.u64(), r.varint(), r.varint(), r.u64(), r.string(), r.string(), r.varint(), r.bytes())
    digest = r.take(16)
    r.end()
    if not 1 <= e.epoch <= 0xFFFFFFFF or e.counter < 1 or e.schema > 65535:
        raise Malformed("event epoch, counter or schema version out of range")
    if not valid_stream(e.stream) or not e.type:
        raise Malformed(f"invalid stream {e.stream!r} or empty type")
    if blake2b(data[:-16], 16) != digest:
        raise Malformed("event hash does not match")
    return e

def describe_payload(e):
    """A readable form of the payloads this peer knows (encoding.md 5); others as hex."""
    try:
        r = Reader(e.payload)
        if e.type in ("favourite.add", "watch.add", "source.enable", "source.disable"):
            out = {"sensor" if "source" not in e.type else "source": r.string()}
        elif e.type in ("favourite.remove", "watch.remove"):
            out = {"sensor": r.string(), "observed": [f"{r.u64():016x}.{r.varint()}:{r.varint()}" for _ in range(r.count())]}
        elif e.type == "unit.set":
            out = {"unit": {1: "celsius", 2: "fahrenheit"}.get(r.u8(), "?")}
        else:
            return {"hex": e.payload.hex()}
        r.end()
        return out
    except ProtocolError:
        return {"hex": e.payload.hex()}

def event_json(e):
    return {"id": e.id(), "stream": e.stream, "type": e.type, "schema": e.schema, "hlc": e.hlc,
            "payload": describe_payload(e)}

# ---------------------------------------------------------------------------------------------- certificates
SCOPE_RE = re.compile(r"(cluster|user:[A-Za-z0-9._-]{1,64})", re.ASCII)
CERT_LABEL = string("breeze certificate v1")
EVENT_LABEL = string("breeze event v1")
REVOCATION_LABEL = string("breeze revocation v1")

@dataclass
class Certificate:
    role: int
    key: bytes
    replica: int
    scope: str
    not_before: int
    not_after: int
    issuer: bytes
    signature: bytes
    raw: bytes = b""

    def signed_part(self):
        return (b"\x01" + bytes([self.role]) + self.key + u64(self.replica) + string(self.scope) +
                u64(self.not_before) + u64(self.not_after) + self.issuer)

def issue_certificate(role, key, replica, scope, not_before, not_after, signer_seed):
    issuer, sk = ed_keypair(signer_seed)
    c = Certificate(role, key, replica, scope, not_before, not_after, issuer, b"")
    c.signature = ed_sign(sk, CERT_LABEL + c.signed_part())
    c.raw = c.signed_part() + c.signature
    return c

def decode_certificate(data):
    r = Reader(data)
    if r.u8() != 1:
        raise Malformed("certificate format is not 1")
    c = Certificate(r.u8(), r.take(32), r.u64(), r.string(), r.u64(), r.u64(), r.take(32), r.take(64), bytes(data))
    r.end()
    if c.role not in (1, 2) or not SCOPE_RE.fullmatch(c.scope) or c.not_before > c.not_after:
        raise Malformed("certificate role, scope or validity invalid")
    if (c.role == 1 and c.replica == 0) or (c.role == 2 and (c.replica != 0 or c.scope == "cluster")):
        raise Malformed("certificate replica id does not fit its role")
    return c

def verify_chain(chain, authority, now_ms, revoked=()):
    """sync.md 4.5: the device certificate of a valid chain, else AuthError."""
    certs = [decode_certificate(b) for b in chain]
    if not 1 <= len(certs) <= 2:
        raise Malformed("a chain holds 1 or 2 certificates")
    for c in certs:
        if not c.not_before <= now_ms <= c.not_after:
            raise AuthError("certificate outside its validity")
        if c.key in revoked:
            raise AuthError("certificate key revoked")
    device = certs[0]
    if device.role != 1:
        raise AuthError("first certificate is not a device certificate")
    if len(certs) == 1:
        signer = authority
    else:
        ua = certs[1]
        if ua.role != 2 or ua.scope != device.scope or not device.scope.startswith("user:"):
            raise AuthError("second certificate is not the user authority of the device's scope")
        if ua.issuer != authority or not ed_verify(authority, CERT_LABEL + ua.signed_part(), ua.signature):
            raise AuthError("user authority not certified by the cluster authority")
        signer = ua.key
    if device.issuer != signer or not ed_verify(signer, CERT_LABEL + device.signed_part(), device.signature):
        raise AuthError("device certificate not signed by its issuer")
    return device

# ---------------------------------------------------------------------------------------------- frames
TYPES = {0x01: "hello", 0x05: "handshake1", 0x06: "handshake2", 0x07: "handshake3", 0x10: "vectors",
         0x11: "events", 0x12: "ack", 0x13: "packed", 0x14: "reset", 0x15: "vectorsPart", 0x16: "subscribe",
         0x17: "signatures", 0x18: "retired", 0x20: "ping", 0x21: "pong", 0x30: "sealed", 0x7F: "error"}
CODE = {v: k for k, v in TYPES.items()}
SEALABLE = {0x10, 0x11, 0x12, 0x13, 0x14, 0x15, 0x16, 0x17, 0x18, 0x20, 0x21, 0x7F}

def plain_frame(mtype, payload):
    body = bytes([mtype]) + payload
    return u32(len(body)) + body + u32(crc32c(body))

def parse_plain_frame(frame):
    """A whole plain frame (as in a golden file) -> (type, payload)."""
    r = Reader(frame)
    length = r.u32()
    if not 1 <= length <= MAX_FRAME:
        raise Malformed("frame length out of range")
    body = r.take(length)
    crc = r.u32()
    r.end()
    if crc32c(body) != crc:
        raise Malformed("CRC mismatch")
    return body[0], body[1:]

def seal_frame(key, counter, message):
    """sync.md 2.1: message = type byte + payload."""
    header = u32(1 + len(message) + 16) + b"\x30"
    return header + aead_encrypt(key, counter, header, message)

def open_frame(key, counter, frame):
    header, sealed = frame[:5], frame[5:]
    if header[4] != 0x30 or struct.unpack("<I", header[:4])[0] != 1 + len(sealed) or len(sealed) < 17:
        raise Malformed("not a sealed frame")
    m = aead_decrypt(key, counter, header, sealed)
    if m is None:
        raise Malformed("sealed frame does not open")
    if m[0] not in SEALABLE:
        raise Malformed(f"type {m[0]:#x} may not be sealed")
    return m[0], m[1:]

# ---------------------------------------------------------------------------------------------- messages
def enc_vectors(vectors):
    """vectors: {stream: {(replica, epoch): counter}} -> payload (sorted as sync.md 3 requires)."""
    out = varint(len(vectors))
    for stream in sorted(vectors, key=lambda s: s.encode()):
        entries = sorted((k, c) for k, c in vectors[stream].items() if c)
        out += string(stream) + varint(len(entries))
        for (replica, epoch), c in entries:
            out += u64(replica) + varint(epoch) + varint(c)
    return out

def dec_vectors(payload):
    r, out = Reader(payload), {}
    for _ in range(r.count()):
        stream = r.string()
        if not valid_stream(stream) or stream in out:
            raise Malformed(f"stream {stream!r} invalid or listed twice")
        vv = out[stream] = {}
        for _ in range(r.count()):
            replica, epoch, c = r.u64(), r.varint(), r.varint()
            if not 1 <= epoch <= 0xFFFFFFFF:
                raise Malformed("epoch out of range")
            if c:
                vv[(replica, epoch)] = c
    r.end()
    return out

def enc_events(batch, events):
    return varint(batch) + varint(len(events)) + b"".join(blob(e.encode()) for e in events)

def dec_events(payload):
    r = Reader(payload)
    batch = r.varint()
    events = [decode_event(r.bytes()) for _ in range(r.count())]
    r.end()
    return batch, events

def enc_ack(batch, inserted, duplicates):
    return varint(batch) + varint(inserted) + varint(duplicates)

def dec_ack(payload):
    r = Reader(payload)
    a = (r.varint(), r.varint(), r.varint())
    r.end()
    if a[1] > 0xFFFFFFFF or a[2] > 0xFFFFFFFF:
        raise Malformed("ack count too large")
    return a

def enc_error(code, message):
    return u16(code) + string(message)

def dec_error(payload):
    r = Reader(payload)
    e = (r.u16(), r.string())
    r.end()
    return e

def dec_u64_only(payload):
    r = Reader(payload)
    v = r.u64()
    r.end()
    return v

def enc_subscribe(streams):
    if streams is None:
        return b"\x00"
    return b"\x01" + varint(len(streams)) + b"".join(string(s) for s in streams)

def dec_subscribe(payload):
    r = Reader(payload)
    mode = r.u8()
    if mode == 0:
        r.end()
        return None
    if mode != 1:
        raise Malformed("subscribe mode")
    streams = [r.string() for _ in range(r.count())]
    r.end()
    if any(not (valid_stream(s) and s.startswith(FACT_PREFIXES)) for s in streams) or \
       [s.encode() for s in streams] != sorted(set(s.encode() for s in streams)) or len(streams) > 50000:
        raise Malformed("subscribe streams")
    return streams

def enc_signatures(batch, chains, entries):
    """chains: [[cert bytes]]; entries: [(index, chain, signature)]."""
    out = varint(batch) + varint(len(chains))
    for ch in chains:
        out += varint(len(ch)) + b"".join(blob(c) for c in ch)
    out += varint(len(entries))
    for index, chain, sig in entries:
        out += varint(index) + varint(chain) + sig
    return out

def enc_retired(batch, entries):
    """entries: [(index, first)]: the event at index of the next batch follows counters first .. counter - 1."""
    return varint(batch) + varint(len(entries)) + b"".join(varint(i) + varint(f) for i, f in entries)

def dec_retired(payload):
    r = Reader(payload)
    batch = r.varint()
    entries = [(r.varint(), r.varint()) for _ in range(r.count())]
    r.end()
    if not entries or any(b[0] <= a[0] for a, b in zip(entries, entries[1:])) or any(f < 1 for _, f in entries):
        raise Malformed("retired entries")
    return batch, entries

def dec_signatures(payload):
    r = Reader(payload)
    batch = r.varint()
    chains = []
    for _ in range(r.count()):
        ch = [r.bytes() for _ in range(r.count())]
        if not 1 <= len(ch) <= 2:
            raise Malformed("signer chain of another length")
        chains.append(ch)
    entries = [(r.varint(), r.varint(), r.take(64)) for _ in range(r.count())]
    r.end()
    if not entries or any(b[0] <= a[0] for a, b in zip(entries, entries[1:])) or any(c >= len(chains) for _, c, _ in entries):
        raise Malformed("signature entries empty, not ascending, or naming no chain")
    return batch, chains, entries

def dec_hello(payload):
    r = Reader(payload)
    h = (r.u16(), r.u16(), r.u64(), r.string(), r.take(32))
    r.end()
    return h

def sign_event(device_sk, e):
    return ed_sign(device_sk, EVENT_LABEL + e.encode())

def revocation_signed_part(key, replica, revoked_at, reason, signer):
    return REVOCATION_LABEL + key + u64(replica) + varint(revoked_at) + string(reason) + signer

def revocation_payload(key, replica, revoked_at, reason, signer_seed, signer_chain=()):
    signer, sk = ed_keypair(signer_seed)
    sig = ed_sign(sk, revocation_signed_part(key, replica, revoked_at, reason, signer))
    return (key + u64(replica) + varint(revoked_at) + string(reason) + signer +
            varint(len(signer_chain)) + b"".join(blob(c) for c in signer_chain) + sig)

def decode_revocation(payload):
    r = Reader(payload)
    key, replica, at, reason, signer = r.take(32), r.u64(), r.varint(), r.string(), r.take(32)
    chain = [r.bytes() for _ in range(r.count())]
    sig = r.take(64)
    r.end()
    ok = ed_verify(signer, revocation_signed_part(key, replica, at, reason, signer), sig)
    return {"key": key, "replica": replica, "revokedAt": at, "reason": reason, "signer": signer,
            "chain": chain, "verifies": ok}

# ---------------------------------------------------------------------------------------------- packed (3.1)
LIMITS = {"streams": 4096, "types": 1024, "origins": 4096, "keys": 4096}

class PackedContext:
    """One direction's context, the same class on both sides (sender and receiver keep it in step)."""
    def __init__(self):
        self.reset()

    def reset(self):
        self.dicts = {"streams": [], "types": [], "origins": [], "keys": []}
        self.counter_base = {}
        self.clock_base = 0

    def check(self, batch, events):
        d = self.dicts
        data = u64(batch) + b"".join(u32(len(d[k])) for k in ("streams", "types", "origins", "keys"))
        return blake2b(data + b"".join(e.encode()[-16:] for e in events), 16)[:4]

    def _ref(self, name, value, write):
        """Encodes a reference to `value` in dictionary `name`, defining it when new."""
        entries = self.dicts[name]
        if value in entries:
            return varint(2 * entries.index(value))
        if len(entries) >= LIMITS[name]:
            raise OverflowError(name)       # the caller would send `reset` first (not needed for small batches)
        entries.append(value)
        return varint(2 * (len(entries) - 1) + 1) + write(value)

    def pack(self, batch, events):
        out = b""
        for e in events:
            stream, typ, origin = e.stream, (e.type, e.schema), (e.replica, e.epoch)
            keys = self.dicts["keys"]
            si = self.dicts["streams"].index(stream) if stream in self.dicts["streams"] else None
            ti = self.dicts["types"].index(typ) if typ in self.dicts["types"] else None
            oi = self.dicts["origins"].index(origin) if origin in self.dicts["origins"] else None
            if None not in (si, ti, oi) and (si, ti, oi) in keys:
                out += varint(2 * keys.index((si, ti, oi)))
            else:
                refs = self._ref("streams", stream, string)
                refs += self._ref("types", typ, lambda t: string(t[0]) + varint(t[1]))
                refs += self._ref("origins", origin, lambda o: u64(o[0]) + varint(o[1]))
                si, ti, oi = (self.dicts["streams"].index(stream), self.dicts["types"].index(typ),
                              self.dicts["origins"].index(origin))
                keys.append((si, ti, oi))
                out += varint(2 * (len(keys) - 1) + 1) + refs
            physical, logical = e.hlc >> 16, e.hlc & 0xFFFF
            out += zigzag(signed64((e.counter - self.counter_base.get((si, oi), 0)) & MASK64))
            out += varint(zz(physical - self.clock_base) << 1 | (1 if logical else 0))
            if logical:
                out += varint(logical)
            out += blob(e.payload)
            self.counter_base[(si, oi)] = e.counter
            self.clock_base = physical
        return self.check(batch, events) + out

    def _read_ref(self, r, name, read):
        ref = r.varint()
        entries = self.dicts[name]
        if ref & 1 == 0:
            if ref >> 1 >= len(entries):
                raise Malformed(f"packed: reference to {name} entry not defined")
            return ref >> 1
        if ref >> 1 != len(entries) or len(entries) >= LIMITS[name]:
            raise Malformed(f"packed: bad definition index or {name} dictionary full")
        entries.append(read())
        return ref >> 1

    def unpack(self, batch, payload):
        """The events of a `packed` payload; Malformed, or Unexpected on a check mismatch."""
        r = Reader(payload)
        check = r.take(4)
        events, total = [], 0

        def read_stream():
            s = r.string()
            if not valid_stream(s):
                raise Malformed("packed: invalid stream")
            return s

        def read_type():
            t, v = r.string(), r.varint()
            if not 1 <= len(t.encode()) <= 128 or v > 65535:
                raise Malformed("packed: type name or schema version out of range")
            return (t, v)

        def read_origin():
            o = (r.u64(), r.varint())
            if not 1 <= o[1] <= 0xFFFFFFFF:
                raise Malformed("packed: epoch out of range")
            return o

        while r.left():
            ref = r.varint()
            keys = self.dicts["keys"]
            if ref & 1 == 0:
                if ref >> 1 >= len(keys):
                    raise Malformed("packed: key not defined")
                si, ti, oi = keys[ref >> 1]
            else:
                if ref >> 1 != len(keys) or len(keys) >= LIMITS["keys"]:
                    raise Malformed("packed: bad key definition")
                si = self._read_ref(r, "streams", read_stream)
                ti = self._read_ref(r, "types", read_type)
                oi = self._read_ref(r, "origins", read_origin)
                keys.append((si, ti, oi))
            counter = (self.counter_base.get((si, oi), 0) + r.zigzag()) & MASK64
            clock = r.varint()
            u = clock >> 1
            physical = self.clock_base + ((u >> 1) ^ -(u & 1))
            logical = r.varint() if clock & 1 else 0
            if clock & 1 and not 1 <= logical <= 65535:
                raise Malformed("packed: logical part out of range")
            if counter == 0 or not 0 <= physical < 1 << 48:
                raise Malformed("packed: counter 0 or physical time out of range")
            payload_bytes = r.bytes()
            (stream, (typ, schema), (replica, epoch)) = (self.dicts["streams"][si], self.dicts["types"][ti],
                                                         self.dicts["origins"][oi])
            e = Event(replica, epoch, counter, physical << 16 | logical, stream, typ, schema, payload_bytes)
            size = len(e.encode())
            total += size
            if size > 1 << 20 or len(events) >= 16384 or total > 8 << 20:
                raise Malformed("packed: event or frame too large")
            events.append(e)
            self.counter_base[(si, oi)] = counter
            self.clock_base = physical
        if self.check(batch, events) != check:
            raise Unexpected("packed: check does not match")
        return events

# ---------------------------------------------------------------------------------------------- Noise XX (4.2)
PROTOCOL_NAME = b"Noise_XX_25519_ChaChaPoly_BLAKE2b"

def prologue(min_v=VERSION, max_v=VERSION):
    return string("breeze-sync") + u16(min_v) + u16(max_v)

def hmac_hash(key, data):
    return hmac.new(key, data, hashlib.blake2b).digest()

def hkdf2(ck, ikm):
    temp = hmac_hash(ck, ikm)
    out1 = hmac_hash(temp, b"\x01")
    return out1, hmac_hash(temp, out1 + b"\x02")

class Noise:
    def __init__(self, static_sk, ephemeral_sk, prologue_bytes):
        self.h = PROTOCOL_NAME + bytes(64 - len(PROTOCOL_NAME))
        self.ck, self.k, self.n = self.h, None, 0
        self.s, self.s_pub = static_sk, x25519_base(static_sk)
        self.e, self.e_pub = ephemeral_sk, x25519_base(ephemeral_sk)
        self.re = self.rs = None
        self.mix_hash(prologue_bytes)

    def mix_hash(self, data):
        self.h = blake2b(self.h + data)

    def mix_key(self, ikm):
        self.ck, t = hkdf2(self.ck, ikm)
        self.k, self.n = t[:32], 0

    def encrypt_and_hash(self, p):
        c = p
        if self.k is not None:
            c = aead_encrypt(self.k, self.n, self.h, p)
            self.n += 1
        self.mix_hash(c)
        return c

    def decrypt_and_hash(self, c):
        p = c
        if self.k is not None:
            p = aead_decrypt(self.k, self.n, self.h, c)
            if p is None:
                raise AuthError("handshake message does not open")
            self.n += 1
        self.mix_hash(c)
        return p

    # message 1: -> e
    def write1(self):
        self.mix_hash(self.e_pub)
        return self.e_pub + self.encrypt_and_hash(b"")

    def read1(self, m):
        if len(m) != 32:
            raise Malformed("handshake1 key")
        self.re = m
        self.mix_hash(m)
        self.decrypt_and_hash(b"")

    # message 2: <- e, ee, s, es
    def write2(self, payload):
        self.mix_hash(self.e_pub)
        self.mix_key(x25519(self.e, self.re))
        c = self.encrypt_and_hash(self.s_pub)
        self.mix_key(x25519(self.s, self.re))
        return self.e_pub + c + self.encrypt_and_hash(payload)

    def read2(self, m):
        if len(m) < 96:
            raise Malformed("handshake2 too short")
        self.re = m[:32]
        self.mix_hash(self.re)
        self.mix_key(x25519(self.e, self.re))
        self.rs = self.decrypt_and_hash(m[32:80])
        self.mix_key(x25519(self.e, self.rs))
        return self.decrypt_and_hash(m[80:])

    # message 3: -> s, se
    def write3(self, payload):
        c = self.encrypt_and_hash(self.s_pub)
        self.mix_key(x25519(self.s, self.re))
        return c + self.encrypt_and_hash(payload)

    def read3(self, m):
        if len(m) < 64:
            raise Malformed("handshake3 too short")
        self.rs = self.decrypt_and_hash(m[:48])
        self.mix_key(x25519(self.e, self.rs))
        return self.decrypt_and_hash(m[48:])

    def split(self):
        k1, k2 = hkdf2(self.ck, b"")
        return k1[:32], k2[:32]

def payload2(chain, version=VERSION, min_v=VERSION, max_v=VERSION):
    return u16(version) + u16(min_v) + u16(max_v) + varint(len(chain)) + b"".join(blob(c) for c in chain)

def dec_payload2(p):
    r = Reader(p)
    version, min_v, max_v = r.u16(), r.u16(), r.u16()
    chain = [r.bytes() for _ in range(r.count())]
    r.end()
    if not 1 <= len(chain) <= 2:
        raise Malformed("payload 2 chain length")
    return version, min_v, max_v, chain

def payload3(chain):
    return varint(len(chain)) + b"".join(blob(c) for c in chain)

def dec_payload3(p):
    r = Reader(p)
    chain = [r.bytes() for _ in range(r.count())]
    r.end()
    if not 1 <= len(chain) <= 2:
        raise Malformed("payload 3 chain length")
    return chain

# ---------------------------------------------------------------------------------------------- selftest
GOLDEN = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "Protocol", "golden")

def golden(name):
    with open(os.path.join(GOLDEN, name + ".hex")) as f:
        return bytes.fromhex("".join(line.split("#")[0] for line in f))

def seed(byte):
    return bytes([byte]) * 32

NB, NA, CLOCK = 1_700_000_000_000, 1_800_000_000_000, 1_750_000_000_000

def selftest(args):
    checked, failures = [], []

    def check(name, cond, what):
        (checked if cond else failures).append(f"{name}: {what}")
        print(("ok   " if cond else "FAIL ") + f"{name}: {what}")

    def roundtrip(name, mtype, encoded_payload, what):
        frame = golden(name)
        t, p = parse_plain_frame(frame)
        check(name, t == mtype and p == encoded_payload and plain_frame(mtype, encoded_payload) == frame, what)
        return p

    check("crc32c", crc32c(b"123456789") == 0xE3069283, "check value of \"123456789\" is e3069283")
    roundtrip("reset", 0x14, b"", "reset frame, CRC 85b90321")
    roundtrip("ack", 0x12, enc_ack(1, 1, 0), "ack batch 1 inserted 1 duplicates 0")
    check("ack", dec_ack(parse_plain_frame(golden("ack"))[1]) == (1, 1, 0), "decodes to (1, 1, 0)")
    roundtrip("ping", 0x20, u64(42), "ping 42")
    roundtrip("pong", 0x21, u64(42), "pong 42")
    msg = "no grant to write stream public in scope user:ana"
    roundtrip("error", 0x7F, enc_error(5, msg), f"error 5 {msg!r}")
    check("error", dec_error(parse_plain_frame(golden("error"))[1]) == (5, msg), "decodes")
    t, p = parse_plain_frame(golden("hello"))
    h = dec_hello(p)
    check("hello", t == 0x01 and h == (1, 1, 0x1111222233334444, "user:ana", bytes(range(32))) and
          plain_frame(0x01, u16(1) + u16(1) + u64(h[2]) + string(h[3]) + h[4]) == golden("hello"),
          f"hello v{h[0]}..{h[1]} replica {h[2]:016x} scope {h[3]} (decoded only to be refused, error 3)")
    vec = {"health:ana": {}, "user:ana": {(0x0123456789abcdef, 3): 7}}
    roundtrip("vectors", 0x10, enc_vectors(vec), "vectors health:ana {} and user:ana {0123456789abcdef.3: 7}")
    check("vectors", dec_vectors(parse_plain_frame(golden("vectors"))[1]) == vec, "decodes to the same vectors")
    roundtrip("vectors-part", 0x15, enc_vectors({"health:ana": {}}), "vectorsPart health:ana {}")
    subs = ["pollen:427_-737", "sensor:purpleair.131075"]
    roundtrip("subscribe", 0x16, enc_subscribe(subs), "subscribe mode 1 " + ", ".join(subs))
    check("subscribe", dec_subscribe(parse_plain_frame(golden("subscribe"))[1]) == subs, "decodes")

    # encoding.md 4 worked example, inside events.hex
    ana = 0x0123456789abcdef
    ev = Event(ana, 3, 1, NB << 16 | 5, "user:ana", "favourite.add", 1, string("131075"))
    check("events", ev.encode()[-16:].hex() == "1bc43f37cb606e5e39ee81f5a2ea7055" and len(ev.encode()) == 67,
          "encoding.md 4 worked example: 67 bytes, BLAKE2b-128 1bc43f37...7055")
    roundtrip("events", 0x11, enc_events(1, [ev]), "events batch 1 holding the worked example")
    check("events", dec_events(parse_plain_frame(golden("events"))[1]) == (1, [ev]), "decodes and verifies the hash")

    # packed.hex then packed-warm.hex, one fresh context each way
    batch1 = [ev, Event(ana, 3, 2, NB << 16 | 6, "user:ana", "favourite.add", 1, string("149970")),
              Event(ana, 3, 3, (NB + 250) << 16, "user:ana", "unit.set", 1, b"\x02")]
    batch2 = [Event(ana, 3, 4, (NB + 1250) << 16, "user:ana", "favourite.add", 1, string("12345"))]
    send, recv = PackedContext(), PackedContext()
    for name, batch, events in (("packed", 1, batch1), ("packed-warm", 2, batch2)):
        t, p = parse_plain_frame(golden(name))
        got = recv.unpack(batch, p)
        check(name, t == 0x13 and got == events, f"batch {batch} decodes to {len(events)} documented event(s), check {p[:4].hex()} matches")
        check(name, plain_frame(0x13, send.pack(batch, events)) == golden(name), "re-encodes byte for byte from the events")

    # Keys of section 4.7
    keys = {}
    for who, b, pub in (("authority", 0x41, "db995fe25169d141cab9bbba92baa01f9f2e1ece7df4cb2ac05190f37fcc1f9d"),
                        ("ana-ua", 0x55, "c6822637c7d310ec57627be00ba259d253749f4aaf644470cffbe53a35f73242"),
                        ("phone", 0x50, "3ef08959033028c8fc6fc6d491a12548e78df6aefb2d7c2c190c3f78cef3f50b"),
                        ("server", 0x53, "f80cccdce4ae1c07ae208a2adf99a310ae4207e0306fa0236110b06827bbb8d0")):
        keys[who] = ed_keypair(seed(b))
        check("keys", keys[who][0].hex() == pub, f"Ed25519 public key of {who} (seed {b:02x})")
    xs = {who: (ed_sk_to_x25519(keys[who][1]), ed_pk_to_x25519(keys[who][0])) for who in ("phone", "server")}
    check("keys", xs["phone"][0].hex() == "904302fc6e8d309b7f085b871dc05f889303669e49fbeea251944be3fb711f4f" and
          xs["phone"][1].hex() == "ffb7d8f55b76689462f5af8cd3041bd88a17e4ced01a36a175f57a8d895ca950" and
          x25519_base(xs["phone"][0]) == xs["phone"][1], "phone static X25519 pair")
    check("keys", xs["server"][0].hex() == "189b87637c8ea03a33f51f13c857a0814a9f0777a53f63fe0d22f7bf63ef1854" and
          xs["server"][1].hex() == "fb5dd9398662bbf316a5d50e0ad5f3beab310b438273c5c02422529993b6a367", "server static X25519 pair")
    check("keys", x25519_base(seed(0xE1)).hex() == "4c2817a9d668ed844d2f95b93b69ecb8485095783a015a424164b0d09702894f" and
          x25519_base(seed(0xE2)).hex() == "19d80204bf85f3e1118e1b23410c88f0d0eeced5156f4c5bdf347b14ed7ec63f", "ephemeral keys")

    # Certificates of 4.7 (Ed25519 is deterministic: issuing again gives the same bytes)
    server_cert = issue_certificate(1, keys["server"][0], 0x5555666677778888, "cluster", NB, NA, seed(0x41))
    phone_cert = issue_certificate(1, keys["phone"][0], 0x1111222233334444, "user:ana", NB, NA, seed(0x55))
    ua_cert = issue_certificate(2, keys["ana-ua"][0], 0, "user:ana", NB, NA, seed(0x41))
    check("certificates", len(server_cert.raw) == 162 and server_cert.signature.hex().startswith("51378a787b4e9e78") and
          server_cert.signature.hex().endswith("c065bb00"), "server certificate (162 bytes) as in 4.7")
    check("certificates", len(phone_cert.raw) == 163 and phone_cert.signature.hex().startswith("7a45a8fd36dae2c5") and
          phone_cert.signature.hex().endswith("b42f8a0f"), "phone certificate (163 bytes) as in 4.7")
    check("certificates", ua_cert.signature.hex().startswith("7feb2b069b8095f7") and ua_cert.signature.hex().endswith("a9eb1c06"),
          "ana's user authority certificate as in 4.7")
    authority = keys["authority"][0]
    phone_chain, server_chain = [phone_cert.raw, ua_cert.raw], [server_cert.raw]
    check("certificates", verify_chain(phone_chain, authority, CLOCK).replica == 0x1111222233334444 and
          verify_chain(server_chain, authority, CLOCK).scope == "cluster", "both chains verify at 1,750,000,000,000 ms")
    try:
        verify_chain(phone_chain, keys["server"][0], CLOCK)
        check("certificates", False, "a chain refused under another authority")
    except AuthError:
        check("certificates", True, "a chain is refused under another authority")

    # The handshake of 4.7, both roles, with the fixed ephemeral keys
    pro = prologue()
    check("handshake", pro.hex() == "0b627265657a652d73796e6303000300", "prologue")
    client = Noise(xs["phone"][0], seed(0xE1), pro)
    server = Noise(xs["server"][0], seed(0xE2), pro)
    m1 = client.write1()
    f1 = plain_frame(0x05, u16(3) + u16(3) + m1)
    check("handshake1", f1 == golden("handshake1"), "client writes handshake1 byte for byte (45 bytes, CRC 62c69ef1)")
    t, p = parse_plain_frame(golden("handshake1"))
    server.read1(p[4:])
    p2 = payload2(server_chain)
    check("handshake2", len(p2) == 171, "payload 2 is 171 bytes")
    f2 = plain_frame(0x06, server.write2(p2))
    check("handshake2", f2 == golden("handshake2"), "server writes handshake2 byte for byte (272 bytes)")
    got2 = client.read2(parse_plain_frame(golden("handshake2"))[1])
    check("handshake2", got2 == p2 and client.rs == xs["server"][1] and dec_payload2(got2)[:3] == (3, 3, 3),
          "client opens it: version 3, offer 3..3, server static key")
    p3 = payload3(phone_chain)
    check("handshake3", len(p3) == 331, "payload 3 is 331 bytes")
    f3 = plain_frame(0x07, client.write3(p3))
    check("handshake3", f3 == golden("handshake3"), "client writes handshake3 byte for byte (400 bytes)")
    got3 = server.read3(parse_plain_frame(golden("handshake3"))[1])
    check("handshake3", got3 == p3 and server.rs == xs["phone"][1] and
          ed_pk_to_x25519(verify_chain(dec_payload3(got3), authority, CLOCK).key) == server.rs,
          "server opens it; the phone's chain verifies and binds the proved static key")
    hh = "d6656e6bc739fa7d2e78726855f8df54a78f1118d8c4be4eb09b4ef57da019fe034864b178bf46a7c178d6b7dfc6090d25d44403bfa194c63a7eb070baef315f"
    check("handshake", client.h.hex() == hh and server.h.hex() == hh, "handshake hash d6656e6b...315f on both sides")
    k1, k2 = client.split()
    check("handshake", (k1.hex(), k2.hex()) == ("c6cb4d5ea9891bd5f7ed489ad6aa92844118a2104cd20ca5e76c70936b1d45bf",
                                                 "9ab24bd21e126e0015f82c287deec1595417a043037ae594363323d65b7035cc")
          and server.split() == (k1, k2), "k1 and k2")

    # Sealed frames of 4.7
    packed_msg = b"\x13" + parse_plain_frame(golden("packed"))[1]
    for name, key, n, message in (("sealed-client-0", k1, 0, b"\x10" + enc_vectors(vec)),
                                  ("sealed-server-0", k2, 0, b"\x10\x00"),
                                  ("sealed-server-1", k2, 1, packed_msg),
                                  ("sealed-client-1", k1, 1, b"\x12" + enc_ack(1, 3, 0))):
        frame = golden(name)
        ok = seal_frame(key, n, message) == frame and open_frame(key, n, frame) == (message[0], message[1:])
        try:
            open_frame(key, n + 1, frame)
            ok = False
        except Malformed:
            pass
        check(name, ok, f"seals byte for byte and opens at counter {n} only ({TYPES[message[0]]})")

    # 6.10: a retired range before the first event of batch 1 (counters 1 .. 4 of its origin, then event 5)
    roundtrip("retired", 0x18, enc_retired(1, [(0, 1)]), "retired batch 1: event 0 follows counters 1 .. its counter - 1")

    # 6.9: the phone's signed event and its signatures message
    signed = Event(0x1111222233334444, 1, 1, CLOCK << 16, "user:ana", "favourite.add", 1, string("131075"))
    roundtrip("signed-event", 0x11, enc_events(1, [signed]), "events batch 1: the phone's favourite.add 131075")
    sig = sign_event(keys["phone"][1], signed)
    roundtrip("signatures", 0x17, enc_signatures(1, [phone_chain], [(0, 0, sig)]),
              "signatures batch 1, one chain (phone, ana's user authority), entry index 0 chain 0")
    b, chains, entries = dec_signatures(parse_plain_frame(golden("signatures"))[1])
    dev = verify_chain(chains[0], authority, CLOCK)
    check("signatures", dev.replica == signed.replica and ed_verify(dev.key, EVENT_LABEL + signed.encode(), entries[0][2]),
          "the signature verifies by the device certificate binding the event's origin")
    try:
        verify_chain(chains[0], keys["ana-ua"][0], CLOCK)
        check("signatures", False, "refused under another authority")
    except AuthError:
        check("signatures", True, "refused under another authority")

    # 4.10: the revocation event
    rp = revocation_payload(keys["phone"][0], 0x1111222233334444, CLOCK, "lost", seed(0x41))
    revoke = Event(0x5555666677778888, 1, 1, CLOCK << 16, "public", "device.revoke", 1, rp)
    roundtrip("revocation", 0x11, enc_events(1, [revoke]), "events batch 1: device.revoke of the phone by the cluster authority")
    got = decode_revocation(dec_events(parse_plain_frame(golden("revocation"))[1])[1][0].payload)
    check("revocation", got["verifies"] and got["signer"] == authority and got["key"] == keys["phone"][0],
          "its signature verifies by the cluster authority, naming the phone's key")

    # A few refusals the spec requires, on the golden bytes
    def refused(fn, exc=Malformed):
        try:
            fn()
            return False
        except exc:
            return True
    check("negative", refused(lambda: Reader(b"\x81\x80\x00").varint()), "a varint not in its shortest form is refused")
    check("negative", refused(lambda: parse_plain_frame(golden("ack")[:5] + b"\x02" + golden("ack")[6:])), "a flipped byte fails the CRC")
    check("negative", refused(lambda: decode_event(ev.encode()[:-1] + b"\x00")), "an event with a wrong hash is refused")
    check("negative", refused(lambda: PackedContext().unpack(2, parse_plain_frame(golden("packed-warm"))[1])),
          "packed-warm without packed first (a lost frame) is refused")
    check("negative", refused(lambda: PackedContext().unpack(2, parse_plain_frame(golden("packed"))[1]), Unexpected),
          "packed under another batch number fails its check (error 2)")
    check("negative", refused(lambda: open_frame(k2, 0, golden("sealed-client-0"))), "a sealed frame under the other direction's key does not open")

    names = sorted(f[:-4] for f in os.listdir(GOLDEN) if f.endswith(".hex"))
    covered = {c.split(":")[0] for c in checked + failures}
    missing = [n for n in names if n not in covered]
    print(f"selftest: {len(checked)} checks passed, {len(failures)} failed; golden files covered: "
          f"{len(names) - len(missing)}/{len(names)}" + (f" (not covered: {', '.join(missing)})" if missing else ""))
    return 1 if failures or missing else 0

# ---------------------------------------------------------------------------------------------- sync
def read_key_file(path):
    replica = seed_bytes = None
    for line in open(path):
        f = line.split()
        if not f or f[0].startswith("#"):
            continue
        if f[0] == "replica" and len(f) == 2:
            replica = int(f[1], 16)
        elif f[0] == "ed25519-seed" and len(f) == 2:
            seed_bytes = bytes.fromhex(f[1])
        else:
            raise SystemExit(f"breeze_peer: {path}: unexpected line {line.strip()!r}")
    if replica is None or seed_bytes is None or len(seed_bytes) != 32:
        raise SystemExit(f"breeze_peer: {path}: needs `replica` and `ed25519-seed` lines")
    return replica, seed_bytes

def read_hex_lines(path):
    return [bytes.fromhex(l.strip()) for l in open(path) if l.strip() and not l.strip().startswith("#")]

class Session:
    """The client side of one session (sync.md 4 and 6), blocking, driven by `run`."""
    def __init__(self, sock, replica, seed_bytes, chain, authority):
        self.sock, self.buf = sock, b""
        self.replica, (self.pk, self.sk) = replica, ed_keypair(seed_bytes)
        self.chain, self.authority = chain, authority
        self.send_n = self.recv_n = 0
        self.opened_any = False
        self.last_sent = time.monotonic()
        self.tx_ctx, self.rx_ctx = PackedContext(), PackedContext()
        self.verbose = False

    # -- frames
    def _recv_exact(self, n, deadline):
        while len(self.buf) < n:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([self.sock], [], [], left)[0]:
                return None
            chunk = self.sock.recv(65536)
            if not chunk:
                raise ConnectionError("the node closed the connection")
            self.buf += chunk
        out, self.buf = self.buf[:n], self.buf[n:]
        return out

    def read_frame(self, deadline, authenticated):
        """(type, payload) of the next frame (opened when sealed), or None at the deadline."""
        head = self._recv_exact(5, deadline)
        if head is None:
            return None
        length, mtype = struct.unpack("<I", head[:4])[0], head[4]
        if not 1 <= length <= (MAX_FRAME if authenticated else MAX_FRAME_BEFORE_AUTH):
            raise Malformed(f"frame length {length} out of range")
        rest = self._recv_exact(length - 1 + (0 if mtype == 0x30 else 4), time.monotonic() + 10)
        if rest is None:
            raise Malformed("frame truncated")
        if mtype == 0x30:
            if not authenticated:
                raise Unexpected("sealed frame before the handshake")
            t, p = open_frame(self.k_in, self.recv_n, head + rest)
            self.recv_n += 1
            self.opened_any = True
            return t, p
        body = head[4:] + rest[:-4]
        if crc32c(body) != struct.unpack("<I", rest[-4:])[0]:
            raise Malformed("CRC mismatch")
        if authenticated and not (mtype == 0x7F and not self.opened_any):
            raise Unexpected("plain frame after the handshake")
        if mtype not in TYPES:
            raise Malformed(f"unknown message type {mtype:#x}")
        return mtype, body[1:]

    def log(self, text):
        if self.verbose:
            print(f"breeze_peer: {text}", file=sys.stderr)

    def send(self, name, payload):
        self.sock.sendall(seal_frame(self.k_out, self.send_n, bytes([CODE[name]]) + payload))
        self.send_n += 1
        self.last_sent = time.monotonic()

    def fail(self, err):
        """Sends `error` (sealed once ready) and re-raises: sync.md 8."""
        try:
            payload = enc_error(err.code, str(err))
            if hasattr(self, "k_out"):
                self.send("error", payload)
            else:
                self.sock.sendall(plain_frame(0x7F, payload))
        except OSError:
            pass
        raise err

    # -- handshake (4.1 to 4.6), as the client
    def handshake(self):
        deadline = time.monotonic() + 5
        noise = Noise(ed_sk_to_x25519(self.sk), os.urandom(32), prologue())
        self.sock.sendall(plain_frame(0x05, u16(VERSION) + u16(VERSION) + noise.write1()))
        f = self.read_frame(deadline, False)
        if f is None:
            raise TimeoutError("no handshake2 within 5 s")
        if f[0] == 0x7F:
            raise PeerError("refused the handshake: error %d %s" % dec_error(f[1]))
        if f[0] != 0x06:
            self.fail(Unexpected(f"expected handshake2, got {TYPES.get(f[0])}"))
        try:
            version, min_v, max_v, chain = dec_payload2(noise.read2(f[1]))
            if version != VERSION or not min_v <= version <= max_v:
                raise VersionError(f"server chose version {version} of {min_v}..{max_v}")
            now = int(time.time() * 1000)
            dev = verify_chain(chain, self.authority, now)
            if ed_pk_to_x25519(dev.key) != noise.rs:
                raise AuthError("server certificate does not bind the static key it proved")
            if dev.replica == self.replica:
                raise Unexpected("connected to itself")
            mine = decode_certificate(self.chain[0])
            if dev.scope != "cluster" and dev.scope != mine.scope:
                raise AuthError(f"scopes {mine.scope} and {dev.scope} cannot sync")
        except ProtocolError as e:
            self.fail(e)
        self.server = dev
        self.scope = mine.scope if dev.scope == "cluster" else dev.scope
        self.sock.sendall(plain_frame(0x07, noise.write3(payload3(self.chain))))
        self.k_out, self.k_in = noise.split()
        self.handshake_hash = noise.h
        self.session_start = now
        self.log(f"handshake done with replica {dev.replica:016x} ({dev.scope}); session scope {self.scope}")

    # -- grants (5), seen from this user:X device
    def may_receive(self, stream):
        user = self.scope.split(":", 1)[1]
        if stream in (f"user:{user}", f"health:{user}"):
            return True
        return self.server.scope == "cluster" and (stream == "public" or stream.startswith(FACT_PREFIXES))

    def check_signatures(self, pending, events):
        """6.9: every signature sent holds; returns the set of indices signed."""
        if pending is None:
            return set()
        _, chains, entries = pending
        signed = set()
        devices = [verify_chain(ch, self.authority, self.session_start) for ch in chains]
        for index, chain, sig in entries:
            if index >= len(events):
                raise Malformed("signature index past the batch")
            e, dev = events[index], devices[chain]
            user_scope = "user:" + e.stream.split(":", 1)[1] if e.stream.startswith(("user:", "health:")) else None
            if dev.replica != e.replica or dev.scope not in ("cluster", user_scope):
                raise Forbidden(f"signature of {e.id()} by a certificate of replica {dev.replica:016x} scope {dev.scope}")
            if not ed_verify(dev.key, EVENT_LABEL + e.encode(), sig):
                raise Forbidden(f"signature of {e.id()} does not verify")
            signed.add(index)
        return signed

    def run(self, favourite, use_packed, expect, timeout, settle):
        self.handshake()
        self.send("vectors", enc_vectors({}))          # we hold nothing yet (6.1)
        epoch = int.from_bytes(os.urandom(4), "little") % 0xFFFFFFFE + 1
        held, received, others, parts = {}, [], {}, {}
        sent = acked = None
        pending_sigs, pending_retired, in_batch, out_batch = None, None, 0, 0
        deadline, last_event = time.monotonic() + timeout, time.monotonic()
        while True:
            now = time.monotonic()
            have = {r["payload"].get("sensor") for r in received}
            if acked and all(s in have for s in expect) and now - last_event >= settle:
                break
            if now > deadline:
                raise TimeoutError(f"timed out after {timeout} s: acked={acked is not None}, "
                                   f"expected {expect}, received {sorted(s for s in have if s)}")
            if now - self.last_sent >= 5:
                self.send("ping", u64(int(time.time() * 1000)))
            f = self.read_frame(min(deadline, now + 0.2), True)
            if f is None:
                continue
            t, p = f
            try:
                if t == 0x7F:
                    code, text = dec_error(p)
                    raise PeerError(f"node sent error {code} ({ERROR_NAMES.get(code, '?')}): {text}")
                elif t == 0x15:                                     # vectorsPart
                    part = dec_vectors(p)
                    if set(part) & set(parts):
                        raise Malformed("stream in two vectorsPart")
                    parts.update(part)
                elif t == 0x10:                                     # vectors: now we may send events
                    vec = dec_vectors(p)
                    if set(vec) & set(parts):
                        raise Malformed("stream in a vectorsPart and in vectors")
                    vec.update(parts)
                    parts = {}
                    self.log(f"<- vectors {{{', '.join(f'{s}: {len(v)} origins' for s, v in sorted(vec.items()))}}}")
                    for s in vec:
                        if not s.startswith(("user:", "health:")) or not self.may_receive(s):
                            raise Forbidden(f"vectors name stream {s} this device may not send")
                    if sent is None:
                        counter = vec.get(f"user:{self.scope[5:]}", {}).get((self.replica, epoch), 0) + 1
                        ev = Event(self.replica, epoch, counter, int(time.time() * 1000) << 16, f"user:{self.scope[5:]}",
                                   "favourite.add", 1, string(favourite))
                        out_batch += 1
                        self.send("signatures", enc_signatures(out_batch, [self.chain], [(0, 0, sign_event(self.sk, ev))]))
                        if use_packed:
                            self.send("packed", self.tx_ctx.pack(out_batch, [ev]))
                        else:
                            self.send("events", enc_events(out_batch, [ev]))
                        sent = {"batch": out_batch, "as": "packed" if use_packed else "events", "event": event_json(ev)}
                        self.log(f"-> signatures + {sent['as']} batch {out_batch}: {ev.id()} favourite.add {favourite}")
                elif t == 0x17:
                    if pending_sigs is not None:
                        raise Unexpected("two signatures messages before a batch")
                    pending_sigs = dec_signatures(p)
                    if pending_sigs[0] != in_batch + 1:
                        raise Unexpected("signatures for another batch than the next")
                elif t == 0x18:                                     # retired (6.10): only the cluster sends it
                    if pending_retired is not None:
                        raise Unexpected("two retired messages before a batch")
                    pending_retired = dec_retired(p)
                    if pending_retired[0] != in_batch + 1:
                        raise Unexpected("retired for another batch than the next")
                elif t in (0x11, 0x13):                             # events / packed
                    if t == 0x11:
                        batch, events = dec_events(p)
                        if batch != in_batch + 1:
                            raise Unexpected(f"events batch {batch} out of sequence")
                    else:
                        batch, events = in_batch + 1, self.rx_ctx.unpack(in_batch + 1, p)
                    in_batch = batch
                    for e in events:
                        if not self.may_receive(e.stream):
                            raise Forbidden(f"event {e.id()} of stream {e.stream} the node may not send here")
                    signed = self.check_signatures(pending_sigs, events)
                    pending_sigs = None
                    retired = dict(pending_retired[1]) if pending_retired else {}
                    pending_retired = None
                    if any(i >= len(events) or f >= events[i].counter for i, f in retired.items()):
                        raise Malformed("a retired range not before an event of its batch")
                    inserted = duplicates = 0
                    for i, e in enumerate(events):
                        k = (e.stream, e.replica, e.epoch)
                        if i in retired and retired[i] <= held.get(k, 0) + 1 < e.counter:
                            held[k] = e.counter - 1                 # compacted away by the sender: held, not lost
                        if e.counter <= held.get(k, 0):
                            duplicates += 1
                        elif e.counter == held.get(k, 0) + 1:       # else a gap: not stored, not counted (6.4)
                            held[k] = e.counter
                            inserted += 1
                            if e.stream.startswith(("user:", "health:")):
                                received.append(dict(event_json(e), signed=i in signed, via=TYPES[t]))
                            else:                                       # public and facts: counted only
                                others[e.stream] = others.get(e.stream, 0) + 1
                    self.send("ack", enc_ack(batch, inserted, duplicates))
                    self.log(f"<- {TYPES[t]} batch {batch}: {len(events)} events, {len(signed)} signed; -> ack {inserted}/{duplicates}")
                    last_event = time.monotonic()
                elif t == 0x12:
                    batch, inserted, duplicates = dec_ack(p)
                    if sent is None or acked is not None or batch != sent["batch"]:
                        raise Unexpected(f"ack for batch {batch} not awaiting one")
                    acked = {"batch": batch, "inserted": inserted, "duplicates": duplicates}
                    self.log(f"<- ack {acked}")
                    if inserted != 1:
                        raise RuntimeError(f"the node did not insert our event: {acked}")
                elif t == 0x14:
                    self.rx_ctx.reset()
                elif t == 0x20:
                    self.send("pong", u64(dec_u64_only(p)))
                elif t == 0x21:
                    dec_u64_only(p)
                elif t == 0x16:
                    dec_subscribe(p)      # a node subscribing to our fact streams: we send none anyway
                else:
                    raise Unexpected(f"{TYPES.get(t, hex(t))} in ready")
            except ProtocolError as e:
                self.fail(e)
        return {"ok": True, "replica": f"{self.replica:016x}", "origin": f"{self.replica:016x}.{epoch}",
                "scope": self.scope, "server": {"replica": f"{self.server.replica:016x}", "scope": self.server.scope},
                "handshake_hash": self.handshake_hash.hex(), "sent": sent, "acked": acked, "received": received,
                "received_other_streams": others, "batches_received": in_batch}

def sync(args):
    replica, seed_bytes = read_key_file(args.key)
    chain = read_hex_lines(args.cert)
    authority = read_hex_lines(args.authority)
    if len(authority) != 1 or len(authority[0]) != 32:
        raise SystemExit(f"breeze_peer: {args.authority}: expected one public key of 64 hex digits")
    dev = decode_certificate(chain[0])
    if dev.key != ed_keypair(seed_bytes)[0] or dev.replica != replica:
        raise SystemExit(f"breeze_peer: {args.cert} does not certify the key and replica of {args.key}")
    if not dev.scope.startswith("user:"):
        raise SystemExit(f"breeze_peer: {args.cert}: scope {dev.scope}, this peer plays a user's device")
    try:
        verify_chain(chain, authority[0], int(time.time() * 1000))
    except ProtocolError as e:
        raise SystemExit(f"breeze_peer: {args.cert} does not verify against the authority {args.authority}: {e}")
    host, _, port = args.address.rpartition(":")
    if not host or not port.isdigit():
        raise SystemExit(f"breeze_peer: --address {args.address!r}: expected HOST:PORT")
    sock = socket.create_connection((host, int(port)), timeout=5)
    try:
        s = Session(sock, replica, seed_bytes, chain, authority[0])
        s.verbose = args.verbose
        out = s.run(args.favourite or f"py-{os.urandom(3).hex()}", args.packed, args.expect_favourite,
                    args.timeout, args.settle)
    finally:
        sock.close()
    print(json.dumps(out, sort_keys=True))
    return 0

def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    sub.add_parser("selftest", help="check every golden file of Protocol/golden")
    sp = sub.add_parser("sync", help="sync once with a breeze node as a device of a user")
    sp.add_argument("--address", required=True, help="HOST:PORT of the node")
    sp.add_argument("--key", required=True, help="the device key file (replica and ed25519-seed lines)")
    sp.add_argument("--cert", required=True, help="the certificate chain file written by breeze enrol --out")
    sp.add_argument("--authority", required=True, help="the cluster authority's public key file (.pub)")
    sp.add_argument("--favourite", help="the sensor of the favourite.add this peer writes (default: random)")
    sp.add_argument("--expect-favourite", action="append", default=[], help="wait until a favourite.add of this sensor arrives")
    sp.add_argument("--packed", action="store_true", help="send our batch as `packed` instead of `events`")
    sp.add_argument("--timeout", type=float, default=20.0)
    sp.add_argument("--verbose", action="store_true", help="log each message to stderr")
    sp.add_argument("--settle", type=float, default=1.0, help="seconds with no new batch before finishing")
    args = ap.parse_args()
    try:
        sys.exit(selftest(args) if args.cmd == "selftest" else sync(args))
    except (ProtocolError, PeerError, TimeoutError, ConnectionError, OSError, RuntimeError) as e:
        sys.exit(f"breeze_peer: {args.cmd} failed: {type(e).__name__}: {e}")

if __name__ == "__main__":
    main()
