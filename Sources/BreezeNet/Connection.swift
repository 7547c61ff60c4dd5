internal import CLibUV
import BreezeSync
@preconcurrency import Glibc

/// One TCP connection on the node's loop: reads bytes into a `FrameDecoder`, coalesces outgoing frames
/// into as few `uv_write` calls as possible, and closes itself exactly once.
///
/// Lives on the loop thread only. libuv holds a retained reference in `handle.data` from `init` until the
/// close callback, which releases it and frees the handle.
final class Connection {
    let handle: UnsafeMutablePointer<uv_tcp_t>
    var decoder = FrameDecoder()
    /// Frames waiting for the current write to finish.
    private var outbox: [UInt8] = []
    private var writing = false
    private(set) var closing = false
    /// Bytes read from the socket so far.
    private(set) var bytesReceived = 0
    /// Called with each batch of decoded messages, or with the decoding error.
    var onMessages: ((Result<[Message], FrameError>) -> Void)?
    /// Called once when the connection is gone (peer closed, error, or `close()`).
    var onClosed: ((String) -> Void)?
    private var closeReason = "closed"
    /// Most outbox capacity kept once its bytes are handed to the kernel.
    static let idleOutboxCapacity = 16 << 10
    /// Bytes queued and not yet written: the shell stops reading the log for this peer above a bound.
    var queuedBytes: Int { outbox.count }

    init(loop: UnsafeMutablePointer<uv_loop_t>) {
        decoder.maxLength = Frame.handshakeMaxLength
        decoder.stopsAfterHandshake = true
        handle = .allocate(capacity: 1)
        uv_tcp_init(loop, handle)
        handle.pointee.data = Unmanaged.passRetained(self).toOpaque()
    }

    var stream: UnsafeMutablePointer<uv_stream_t> { UnsafeMutableRawPointer(handle).assumingMemoryBound(to: uv_stream_t.self) }

    static func from(_ h: UnsafeMutableRawPointer?) -> Connection {
        Unmanaged<Connection>.fromOpaque(h!.assumingMemoryBound(to: uv_handle_t.self).pointee.data).takeUnretainedValue()
    }

    /// True while `pauseReading` holds the socket unread (the peer's sends then block in its kernel buffers).
    private(set) var readingPaused = false

    /// Starts reading. TCP_NODELAY is set: frames are already coalesced by the outbox.
    func startReading() throws(UVError) {
        uv_tcp_nodelay(handle, 1)
        try readStart()
    }

    /// Backpressure: stops reading the socket (`uv_read_stop`) until `resumeReading`. What the peer sends
    /// meanwhile waits in the kernel's buffers and then blocks its sender, costing this node nothing.
    func pauseReading() {
        guard !closing, !readingPaused else { return }
        readingPaused = true
        uv_read_stop(stream)
    }

    /// Reads again after `pauseReading`.
    func resumeReading() {
        guard !closing, readingPaused else { return }
        readingPaused = false
        do { try readStart() } catch { close(error.description) }
    }

    private func readStart() throws(UVError) {
        try UVError.check(uv_read_start(stream, { _, suggested, buf in
            buf!.pointee = uv_buf_init(malloc(suggested)?.assumingMemoryBound(to: CChar.self), UInt32(suggested))
        }, { stream, nread, buf in
            let c = Connection.from(UnsafeMutableRawPointer(stream))
            defer { free(buf?.pointee.base) }
            if nread < 0 {
                c.close(nread == Int(UV_EOF.rawValue) ? "peer closed the connection" : "read failed: \(String(cString: uv_strerror(Int32(nread))))")
                return
            }
            guard nread > 0, !c.closing else { return }
            c.bytesReceived += nread
            let bytes = UnsafeRawBufferPointer(start: buf!.pointee.base, count: nread)
            do {
                // The decoder stops after a handshake message, so the node acts on it (and raises the
                // frame bound once the peer is authenticated) before the frames behind it are decoded.
                var messages = try c.decoder.feed(bytes)
                while !messages.isEmpty && !c.closing {
                    c.onMessages?(.success(messages))
                    guard c.decoder.pending > 0, !c.closing else { break }
                    messages = try c.decoder.feed(UnsafeRawBufferPointer(start: nil, count: 0))
                }
            } catch let e as FrameError {
                c.onMessages?(.failure(e))
            } catch {
                c.close("\(error)")
            }
        }), "read")
    }

    /// Queues a frame; it is written with whatever else is queued in this loop iteration.
    func send(_ frame: [UInt8]) {
        guard !closing else { return }
        outbox.append(contentsOf: frame)
        flush()
    }

    private func flush() {
        guard !writing, !outbox.isEmpty, !closing || closeAfterFlush else { return }
        let n = outbox.count
        let block = malloc(n)!
        outbox.withUnsafeBytes { block.copyMemory(from: $0.baseAddress!, byteCount: n) }
        // An idle connection keeps a small buffer, not the largest batch it ever sent (thousands of idle
        // sessions each holding a catch-up's worth would cost the node hundreds of MiB).
        outbox.removeAll(keepingCapacity: outbox.capacity <= Connection.idleOutboxCapacity)
        let req = UnsafeMutablePointer<uv_write_t>.allocate(capacity: 1)
        req.pointee.data = block
        var buf = uv_buf_init(block.assumingMemoryBound(to: CChar.self), UInt32(n))
        writing = true
        let rc = uv_write(req, stream, &buf, 1) { req, status in
            free(req!.pointee.data)
            let c = Connection.from(UnsafeMutableRawPointer(req!.pointee.handle))
            req!.deallocate()
            c.writing = false
            if status < 0 {
                c.close("write failed: \(String(cString: uv_strerror(status)))")
            } else if c.closeAfterFlush && c.outbox.isEmpty {
                c.finishClose()
            } else {
                c.flush()
            }
        }
        if rc < 0 {
            free(block)
            req.deallocate()
            writing = false
            close("write failed: \(String(cString: uv_strerror(rc)))")
        }
    }

    private var closeAfterFlush = false
    /// When `closeAfterWriting` was called (loop time), so the node can force the close if the peer never
    /// reads what is queued.
    private(set) var closeRequestedMillis: UInt64?

    /// Writes what is queued (an error frame, say), then closes.
    func closeAfterWriting(_ reason: String, now: UInt64) {
        guard !closing else { return }
        closeRequestedMillis = now
        closeReason = reason
        closing = true
        closeAfterFlush = true
        uv_read_stop(stream)
        if writing { return }
        if !outbox.isEmpty { flush(); return }
        finishClose()
    }

    /// Closes now, dropping anything queued. With `reset` the peer gets a TCP reset instead of an orderly
    /// end (`uv_tcp_close_reset`): for connections dropped as abuse, it leaves no TIME_WAIT socket here and
    /// costs the kernel less than a FIN exchange.
    func close(_ reason: String, reset: Bool = false) {
        if closing && !closeAfterFlush { return }
        closeReason = reason
        closing = true
        closeAfterFlush = false
        finishClose(reset: reset && !writing)
    }

    private var closed = false
    private func finishClose(reset: Bool = false) {
        guard !closed else { return }
        closed = true
        let callback = onClosed
        onClosed = nil
        onMessages = nil
        callback?(closeReason)
        let done: uv_close_cb = { h in
            let raw = UnsafeMutableRawPointer(h!)
            Unmanaged<Connection>.fromOpaque(h!.pointee.data).release()
            raw.assumingMemoryBound(to: uv_tcp_t.self).deallocate()
        }
        if reset && uv_tcp_close_reset(handle, done) == 0 { return }
        uv_close(UnsafeMutableRawPointer(handle).assumingMemoryBound(to: uv_handle_t.self), done)
    }

    /// The remote address as `host:port`.
    func peerName() -> String {
        var storage = sockaddr_storage()
        var len = Int32(MemoryLayout<sockaddr_storage>.size)
        let rc = withUnsafeMutablePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { uv_tcp_getpeername(handle, $0, &len) }
        }
        guard rc == 0 else { return "?" }
        return SocketAddress.describe(&storage)
    }
}

// Confined to the loop thread.
@available(*, unavailable)
extension Connection: Sendable {}
