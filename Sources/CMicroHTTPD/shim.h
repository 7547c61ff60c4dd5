#ifndef BREEZE_CMICROHTTPD_SHIM_H
#define BREEZE_CMICROHTTPD_SHIM_H
// libmicrohttpd (Debian libmicrohttpd-dev), for the inspector's and the node metrics' HTTP server
// (BreezeInspect/HTTPServer.swift, the only importer). What Swift cannot import is wrapped here: the variadic
// MHD_start_daemon and the reader's end-of-stream macro (a cast).
#include <sys/types.h>
#include <sys/socket.h>
#include <stdint.h>
#include <microhttpd.h>

/// Starts a daemon on an already listening socket `listen_fd` (MHD_OPTION_LISTEN_SOCKET), with a thread per
/// connection (a server-sent event stream blocks its own thread only), an internal thread accepting and an
/// inter-thread channel (MHD_USE_ITC, which MHD_quiesce_daemon needs), waiting with poll() rather than select()
/// (MHD_USE_POLL): select() cannot watch a descriptor numbered 1,024 or more, which a node serving thousands of
/// devices hands to its metrics endpoint;
/// at most `connection_limit` connections at once, idle ones closed after `timeout_seconds`.
/// Returns NULL when the daemon cannot start. See
/// https://www.gnu.org/software/libmicrohttpd/manual/html_node/microhttpd_002dinit.html
static inline struct MHD_Daemon *breeze_mhd_start(int listen_fd, MHD_AccessHandlerCallback handler, void *cls,
                                                  unsigned int connection_limit, unsigned int timeout_seconds) {
    return MHD_start_daemon(MHD_USE_THREAD_PER_CONNECTION | MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_ITC | MHD_USE_POLL,
                            0, NULL, NULL, handler, cls,
                            MHD_OPTION_LISTEN_SOCKET, (MHD_socket)listen_fd,
                            MHD_OPTION_CONNECTION_LIMIT, connection_limit,
                            MHD_OPTION_CONNECTION_TIMEOUT, timeout_seconds,
                            MHD_OPTION_END);
}

/// MHD_CONTENT_READER_END_OF_STREAM: a streamed response is complete.
static inline ssize_t breeze_mhd_end_of_stream(void) { return MHD_CONTENT_READER_END_OF_STREAM; }
#endif
