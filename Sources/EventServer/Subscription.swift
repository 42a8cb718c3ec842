/// What one client has asked to receive. A value type with no I/O.
///
/// A new client receives every event line and no coefficient or rows lines; a `subscribe` replaces all three
/// choices.
/// Status, heartbeat, dropped, bye and reply lines go to every client regardless.
public struct Subscription: Equatable, Sendable {
    /// The event names to send; `nil` means all of them.
    public var events: Set<String>?
    /// Whether `coefficients` lines are sent.
    public var coefficients: Bool
    /// Whether the `analyzers` line and per-frame `rows` lines are sent.
    public var analyzers: Bool

    /// Every event, no coefficients, no rows: what a client gets before it subscribes.
    public init(events: Set<String>? = nil, coefficients: Bool = false, analyzers: Bool = false) {
        self.events = events
        self.coefficients = coefficients
        self.analyzers = analyzers
    }

    /// Whether an event line for `name` goes to this client.
    public func wants(event name: String) -> Bool { events?.contains(name) ?? true }

    /// Applies a `subscribe` request, checking event names against `knownEvents` (the server's `hello`
    /// list). `events` nil subscribes to every event, including names announced later (a reload);
    /// `analyzers` asks for the `analyzers` and `rows` lines.
    /// - Returns: the reply line for the request.
    /// - Throws: `ProtocolError` `.unknownEvent` naming every unknown event, in the request's order (each
    ///   once, cut to 64 characters; past 32 names, how many more); the subscription is then left unchanged.
    public mutating func apply(id: Int?, events names: [String]?, coefficients withCoefficients: Bool,
                               analyzers withAnalyzers: Bool = false, knownEvents: Set<String>) throws -> OKLine {
        if let names {
            var unknown: [String] = []
            for name in names where !knownEvents.contains(name) && !unknown.contains(name) { unknown.append(name) }
            if !unknown.isEmpty {
                // At most 32 names shown, so the error line stays far under the 8 KiB line limit.
                var listed = unknown.prefix(32).map { "'\($0.prefix(64))'" }.joined(separator: ", ")
                if unknown.count > 32 { listed += " and \(unknown.count - 32) more" }
                throw ProtocolError(
                    .unknownEvent, id: id,
                    "unknown event\(unknown.count == 1 ? "" : "s") \(listed); known: "
                        + knownEvents.sorted().joined(separator: ","))
            }
        }
        events = names.map(Set.init)
        coefficients = withCoefficients
        analyzers = withAnalyzers
        return OKLine(id: id)
    }
}

/// A FIFO of encoded lines with a fixed capacity: pushing onto a full queue drops the oldest line that is
/// not kept, and counts it. Kept lines (`status`, `analyzers`, answers, `bye`) say what the lines after them
/// mean or what changed once: a slow client that lost the `analyzers` line of a reload went on reading rows
/// against the old table without a sign. Only a queue of nothing but kept lines drops its oldest kept one.
/// Not thread-safe (the server guards each client's queue with its lock).
struct BoundedLineQueue {
    let capacity: Int
    private var storage: [(bytes: [UInt8], keep: Bool)] = []
    private var head = 0
    /// Lines dropped since the count was last taken with `takeDroppedCount()`.
    private(set) var droppedCount = 0

    init(capacity: Int) {
        precondition(capacity > 0)
        self.capacity = capacity
    }

    var count: Int { storage.count - head }
    var isEmpty: Bool { count == 0 }

    mutating func push(_ line: [UInt8], keep: Bool = false) {
        if count >= capacity {
            if let i = storage[head...].firstIndex(where: { !$0.keep }), i != head {
                storage.remove(at: i)
            } else {
                head += 1
            }
            droppedCount += 1
        }
        storage.append((line, keep))
        if head > 64 && head * 2 > storage.count {
            storage.removeFirst(head)
            head = 0
        }
    }

    mutating func popFirst() -> [UInt8]? {
        guard head < storage.count else { return nil }
        let line = storage[head].bytes
        head += 1
        if head == storage.count {
            storage.removeAll(keepingCapacity: true)
            head = 0
        }
        return line
    }

    var first: [UInt8]? { head < storage.count ? storage[head].bytes : nil }

    mutating func takeDroppedCount() -> Int {
        defer { droppedCount = 0 }
        return droppedCount
    }
}
