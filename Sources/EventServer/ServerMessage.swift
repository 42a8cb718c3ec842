import Foundation

/// The protocol version in the `hello` line.
public let eventProtocolVersion = 1

/// `{"type":"hello","protocol":"winkd","version":1,"events":[...]}`: the server's first line to every client.
/// `events` names every event the analyzer table can emit (plus `faceFound`/`faceLost`).
public struct HelloLine: Codable, Sendable, Equatable {
    /// Always "hello".
    public var type = "hello"
    /// Always "winkd".
    public var `protocol` = "winkd"
    /// `eventProtocolVersion`.
    public var version = eventProtocolVersion
    /// Every event name a client may subscribe to, in table order.
    public var events: [String]

    /// The greeting announcing `events`.
    public init(events: [String]) { self.events = events }
}

/// `{"type":"ok","id":1}`: a request was accepted. `id` echoes the request's, absent if it had none.
public struct OKLine: Codable, Sendable, Equatable {
    /// Always "ok".
    public var type = "ok"
    /// The request's `id`; nil (absent) when it had none.
    public var id: Int?

    /// The answer to the request `id`.
    public init(id: Int?) { self.id = id }
}

/// `{"type":"error","id":1,"code":"unknown_event","message":"..."}`: a request was refused, or the client
/// broke the protocol. `code` is one of `ProtocolError.Code`; `id` echoes the request's when it had one.
public struct ErrorLine: Codable, Sendable, Equatable {
    /// Always "error".
    public var type = "error"
    /// The request's `id`; nil (absent) when it had none.
    public var id: Int?
    /// A `ProtocolError.Code` raw value, e.g. "unknown_event".
    public var code: String
    /// One line for a person.
    public var message: String

    /// An error line from its fields.
    public init(id: Int?, code: String, message: String) {
        self.id = id
        self.code = code
        self.message = message
    }

    /// The error line saying `error`.
    public init(_ error: ProtocolError) {
        self.init(id: error.id, code: error.code.rawValue, message: error.message)
    }
}

/// `{"type":"dropped","count":N}`: the client read too slowly and lost its `count` oldest queued lines,
/// which would have come just before this one.
public struct DroppedLine: Codable, Sendable, Equatable {
    /// Always "dropped".
    public var type = "dropped"
    /// How many lines were lost.
    public var count: Int

    /// The line for `count` lost lines.
    public init(count: Int) { self.count = count }
}

/// `{"type":"heartbeat","time":...}`: sent to a client nothing was sent to for a while, so it can tell a
/// quiet daemon from a dead one. `time` is wall-clock Unix time in seconds (ms resolution).
public struct HeartbeatLine: Codable, Sendable, Equatable {
    /// Always "heartbeat".
    public var type = "heartbeat"
    /// Unix time in seconds (wall clock).
    public var time: Double

    /// A heartbeat at `time`, Unix seconds.
    public init(time: Double) { self.time = time }
}

/// What a `status` line reports: a change in the daemon's source, picture, overlay output or configuration.
/// Sent as its snake_case raw value (`"state":"camera_busy"`). Every client receives every status line.
///
/// New states may be added in a later protocol version; a client should show an unknown state's
/// `message` rather than fail. (This type decodes only the states below.)
public enum StatusState: String, Codable, Sendable, CaseIterable {
    /// The source opened and frames flow; `source` names it (a device or a file).
    case sourceOpened = "source_opened"
    /// The source was closed on purpose: nobody has listened for the linger time, or a reload restarted it.
    case sourceClosed = "source_closed"
    /// The source could not be opened or failed while read; `message` says why. Retried with backoff
    /// (1, 2, 4, 8, 10, 10... s) while clients are connected.
    case sourceFailed = "source_failed"
    /// A recording was read to its end but is damaged: packets that did not decode were skipped (later
    /// frames are numbered as decoded), reading stopped at an error, or it holds fewer frames than its
    /// container declares (truncated); `message` says which. Events came for the frames that decoded.
    /// Sent once per opening of the recording, before `bye` (or before it plays again, with `--loop`).
    case sourceDamaged = "source_damaged"
    /// No camera (yet): none is plugged in, or the named one does not exist; looked for every 2 s.
    case cameraAbsent = "camera_absent"
    /// Another program streams from the camera (`EBUSY`); `message` says when it is retried.
    case cameraBusy = "camera_busy"
    /// The camera went away mid-stream (`ENODEV`); streaming resumes when the same device is back.
    case cameraUnplugged = "camera_unplugged"
    /// No frame came for 2 s; the camera is closed and opened again.
    case cameraStalled = "camera_stalled"
    /// Corrupt (MJPEG) frames were dropped; `message` counts them (at most one line every 10 s).
    case cameraCorruptFrames = "camera_corrupt_frames"
    /// The picture has been nearly black for a second (a covered lens); such frames are not tracked.
    case cameraDark = "camera_dark"
    /// Every frame has been one flat colour for a second (no picture from the camera or its driver).
    case captureBlank = "capture_blank"
    /// The picture is back after `camera_dark` or `capture_blank`.
    case cameraLight = "camera_light"
    /// The overlay output device opened; `message` gives its size and pixel format.
    case overlayOutputOpened = "overlay_output_opened"
    /// The overlay output device could not be opened or written; events go on without it.
    case overlayOutputFailed = "overlay_output_failed"
    /// SIGHUP: the configuration file and overlay layout were read again and are in use.
    case reloadOk = "reload_ok"
    /// SIGHUP: the new configuration has a problem (`message`); the old one stays in use.
    case reloadFailed = "reload_failed"
    /// Only in the answer to a `status` request: no source is open (nobody has listened for the linger
    /// time, or none yet).
    case idle

    /// Whether the state says what the source (camera or recording) is doing now (`idle`: no source is
    /// open), as opposed to news beside it: a reload (`reload_ok`, `reload_failed`), the overlay output
    /// (`overlay_output_*`), frames dropped while streaming goes on (`camera_corrupt_frames`). A display of
    /// the source's state (systemd's STATUS, `winkctl monitor`'s title, a `status` answer) keeps it across
    /// such news.
    public var concernsTheSource: Bool {
        switch self {
        case .overlayOutputOpened, .overlayOutputFailed, .reloadOk, .reloadFailed, .cameraCorruptFrames: false
        default: true
        }
    }
}

/// `{"type":"status","state":"source_opened","source":"/dev/video0","message":"..."}`: a change in the
/// daemon's state that every client receives (`StatusState` lists them).
///
/// The same line answers a client's `{"type":"status","id":2}` request, to that client only, with the
/// request's `id` and the fields a broadcast line does not have:
/// `{"type":"status","id":2,"state":"source_opened","source":"/dev/video0","clients":1,"fps":29.97}`.
/// There `state` is the source's latest state (`source_opened` while frames flow, a camera fault while one
/// lasts, `idle` while no source is open) and `source` the device or file configured, or open.
/// Fields absent from a line are `nil`; clients must ignore fields they do not know (protocol version 1).
public struct StatusLine: Codable, Sendable, Equatable {
    /// Always "status".
    public var type = "status"
    /// The request's `id`, only on the answer to a `status` request (absent when the request had none).
    public var id: Int?
    /// What changed; in an answer, the source's latest state.
    public var state: StatusState
    /// The device or file the state concerns, if any.
    public var source: String?
    /// A human-readable detail, if any.
    public var message: String?
    /// Answers only: clients connected, the asking one included.
    public var clients: Int?
    /// Answers only: frames processed per second over the last 2 seconds (0 when none came).
    public var fps: Double?
    /// Only on the state a full daemon sends after its `too_many_clients` refusal: true (`clients` is then
    /// its maximum, the asker not counted).
    public var full: Bool?

    /// A broadcast status line (no `id`, `clients` or `fps`).
    public init(state: StatusState, source: String? = nil, message: String? = nil) {
        self.state = state
        self.source = source
        self.message = message
    }

    /// The answer to a `status` request (`id` echoed).
    public init(answering id: Int?, state: StatusState, source: String?, clients: Int, fps: Double,
                message: String? = nil) {
        self.init(state: state, source: source, message: message)
        self.id = id
        self.clients = clients
        self.fps = fps
    }
}

/// `{"type":"bye","reason":"end_of_input"}`: the server is closing the connection on purpose.
/// Reasons used: `end_of_input` (a recording ended), `shutdown` (the daemon is stopping).
public struct ByeLine: Codable, Sendable, Equatable {
    /// Always "bye".
    public var type = "bye"
    /// Why: `end_of_input` or `shutdown`.
    public var reason: String

    /// A goodbye for `reason`.
    public init(reason: String) { self.reason = reason }
}
