import Foundation

/// The version of the `analyzers` and `rows` lines' format, in every `analyzers` line. It grows when a field
/// changes meaning or goes away; new optional fields do not change it.
public let analyzersLineVersion = 1

/// `{"type":"analyzers","version":1,"rows":[{"event":"winkLeft","kind":"held","enter":0.5,"exit":0.35,...}]}`:
/// the analyzer table as the daemon runs it, for clients that tune thresholds (`winkctl monitor`).
///
/// Sent only to clients that subscribed with `"analyzers":true`: once, right after the subscribe's `ok`,
/// and again to each of them when a SIGHUP reload put a new table in use (before that table's first
/// `rows` line). Opt-in, so protocol-1 clients see no new line.
///
/// `Row` is the row as the configuration file writes it (the daemon and `winkctl monitor` use
/// `AnalyzerRow`, whose coding is that format); the server only encodes and forwards it.
public struct AnalyzersLine<Row: Codable & Sendable & Equatable>: Codable, Sendable, Equatable {
    /// Always "analyzers".
    public var type = "analyzers"
    /// `analyzersLineVersion` of the sender.
    public var version = analyzersLineVersion
    /// The rows in table order (the order of every `rows` line's `rows`).
    public var rows: [Row]

    /// The line for `rows`, in table order, at this build's `analyzersLineVersion`.
    public init(rows: [Row]) { self.rows = rows }
}

/// `{"type":"analyzers","version":1,"rowCount":115,"omitted":"..."}`: sent instead of `AnalyzersLine` when the
/// table's line would pass the protocol's 8 KiB line limit (many rows, long names or formulas). No `rows` line
/// is sent for such a table (its per-frame line would not fit either); events flow as ever. A client tells the
/// two forms apart by `rows` (present) or `omitted` (present).
public struct AnalyzersOmittedLine: Codable, Sendable, Equatable {
    /// Always "analyzers".
    public var type = "analyzers"
    /// `analyzersLineVersion` of the sender.
    public var version = analyzersLineVersion
    /// How many rows the table in use has.
    public var rowCount: Int
    /// Why the table is not described, for a person: "its analyzers line would be 25010 bytes, over the
    /// 8 KiB line limit".
    public var omitted: String

    /// The line for a table of `rowCount` rows left undescribed for `omitted`.
    public init(rowCount: Int, omitted: String) {
        self.rowCount = rowCount
        self.omitted = omitted
    }
}

/// `{"type":"rows","frame":25,"time":0.833,"t_mono_ns":...,"face":true,"rows":[{"event":"winkLeft",
/// "value":0.62,"state":"pending","held":0.1},...]}`: every analyzer row's value and state at one frame.
///
/// Sent for every processed frame (with or without a face, unlike `coefficients` lines) to clients that
/// subscribed with `"analyzers":true`, after that frame's `coefficients` line and before its events; not
/// built at all while no client asked for it.
public struct RowsLine: Codable, Sendable, Equatable {
    /// Always "rows".
    public var type = "rows"
    /// 0-based index of the source frame.
    public var frame: Int
    /// Seconds from the first frame of the source (the frame's own timestamp).
    public var time: Double
    /// `CLOCK_MONOTONIC` nanoseconds when the frame was captured (released, for a recording).
    public var tMonoNs: UInt64?
    /// Whether a face is present (it may be unseen for up to the quality gate's `faceLostGrace`).
    public var face: Bool
    /// Every row, in the order of the last `analyzers` line.
    public var rows: [Row]

    /// One row at this frame.
    public struct Row: Codable, Sendable, Equatable {
        /// The row's event name.
        public var event: String
        /// The row's value (0...1, 2 decimals) at this frame; 0 while no face is present.
        public var value: Double
        /// `idle`, `pending`, `active`, `latched` (ended by maxDuration or a closed gate: waits for the value
        /// to drop below exit), `cooling` (within its cooldown), `suppressed` (by the row `by`) or `gated`
        /// (its face-quality `gate` is closed). A client should show an unknown state as it is.
        public var state: String
        /// Seconds since the onset, for `pending` and `active`.
        public var held: Double?
        /// Seconds of cooldown left, for `cooling`.
        public var remaining: Double?
        /// The suppressing row's event name, for `suppressed`.
        public var by: String?
        /// The closed gate (`eyes`, `mouth`), for `gated`.
        public var gate: String?

        /// One row; `value` in 0...1, `held` and `remaining` in seconds.
        public init(event: String, value: Double, state: String, held: Double? = nil, remaining: Double? = nil,
                    by: String? = nil, gate: String? = nil) {
            self.event = event
            self.value = value
            self.state = state
            self.held = held
            self.remaining = remaining
            self.by = by
            self.gate = gate
        }
    }

    enum CodingKeys: String, CodingKey {
        case type, frame, time, face, rows
        case tMonoNs = "t_mono_ns"
    }

    /// The line for one frame; `time` in seconds from the first frame, `tMonoNs` in nanoseconds.
    public init(frame: Int, time: Double, tMonoNs: UInt64?, face: Bool, rows: [Row]) {
        self.frame = frame
        self.time = time
        self.tMonoNs = tMonoNs
        self.face = face
        self.rows = rows
    }
}
