import Foundation

/// The protocol version in the `hello` line.
public let eventProtocolVersion = 1

/// `{"type":"hello","protocol":"winkd","version":1,"events":[...]}`: the server's first line to every client.
/// `events` names every event the analyzer table can emit (plus `faceFound`/`faceLost`).
public struct HelloLine: Codable, Sendable, Equatable {
    public var type = "hello"
    public var `protocol` = "winkd"
    public var version = eventProtocolVersion
    public var events: [String]

    public init(events: [String]) { self.events = events }
}

/// `{"type":"ok","id":1}`: a request was accepted. `id` echoes the request's, absent if it had none.
public struct OKLine: Codable, Sendable, Equatable {
    public var type = "ok"
    public var id: Int?

    public init(id: Int?) { self.id = id }
}

/// `{"type":"error","id":1,"code":"unknown_event","message":"..."}`: a request was refused, or the client
/// broke the protocol. `code` is one of `ProtocolError.Code`; `id` echoes the request's when it had one.
public struct ErrorLine: Codable, Sendable, Equatable {
    public var type = "error"
    public var id: Int?
    public var code: String
    public var message: String

    public init(id: Int?, code: String, message: String) {
        self.id = id
        self.code = code
        self.message = message
    }

    public init(_ error: ProtocolError) {
        self.init(id: error.id, code: error.code.rawValue, message: error.message)
    }
}

/// `{"type":"dropped","count":N}`: the client read too slowly and lost its `count` oldest queued lines,
/// which would have come just before this one.
public struct DroppedLine: Codable, Sendable, Equatable {
    public var type = "dropped"
    public var count: Int

    public init(count: Int) { self.count = count }
}

/// `{"type":"heartbeat","time":...}`: sent to a client nothing was sent to for a while, so it can tell a
/// quiet daemon from a dead one. `time` is wall-clock Unix time in seconds (ms resolution).
public struct HeartbeatLine: Codable, Sendable, Equatable {
    public var type = "heartbeat"
    public var time: Double

    public init(time: Double) { self.time = time }
}

/// `{"type":"status","state":"camera_open","source":"/dev/video0","message":"..."}`: a change in the
/// daemon's state that every client receives, e.g. the source opening or closing or failing.
public struct StatusLine: Codable, Sendable, Equatable {
    public var type = "status"
    /// A short snake_case state name (e.g. `source_opened`, `source_closed`, `source_failed`).
    public var state: String
    /// The device or file the state concerns, if any.
    public var source: String?
    /// A human-readable detail, if any.
    public var message: String?

    public init(state: String, source: String? = nil, message: String? = nil) {
        self.state = state
        self.source = source
        self.message = message
    }
}

/// `{"type":"bye","reason":"end_of_input"}`: the server is closing the connection on purpose.
/// Reasons used: `end_of_input` (a recording ended), `shutdown` (the daemon is stopping).
public struct ByeLine: Codable, Sendable, Equatable {
    public var type = "bye"
    public var reason: String

    public init(reason: String) { self.reason = reason }
}
