/// Splits a byte stream into NDJSON lines (SPEC.md "Event lines": UTF-8, at most 8 KiB a line).
///
/// Bytes arrive in arbitrary chunks (a half-sent line stays buffered until its newline). Each complete
/// line is returned without its `\n` (and without a trailing `\r`); empty lines, and lines of only JSON's
/// white space (spaces, tabs, carriage returns: a `\r\n` typed twice), are skipped alike. A line whose
/// length reaches past `maximumLineBytes` before its newline is reported once as `.tooLong`, after which
/// the splitter discards everything (the connection is to be closed). A value type with no I/O: the
/// server and the client both feed it from `read(2)`.
public struct LineSplitter: Sendable {
    /// One result of `append`.
    public enum Item: Equatable, Sendable {
        /// A complete line's bytes, without the newline. Not yet checked for valid UTF-8.
        case line([UInt8])
        /// A line exceeded the limit; no more items follow.
        case tooLong
    }

    /// SPEC.md's limit: 8 KiB (8192 bytes) per line, not counting the newline.
    public static let protocolLimit = 8192

    /// The longest line accepted, in bytes, not counting the newline.
    public let maximumLineBytes: Int
    private var buffer: [UInt8] = []
    /// Set once a line was too long; later input is ignored.
    public private(set) var overflowed = false

    /// A splitter accepting lines up to `maximumLineBytes` bytes (> 0; default 8192).
    public init(maximumLineBytes: Int = LineSplitter.protocolLimit) {
        precondition(maximumLineBytes > 0)
        self.maximumLineBytes = maximumLineBytes
    }

    /// Bytes held for a line whose newline has not arrived yet.
    public var pendingByteCount: Int { buffer.count }

    /// Feeds bytes in; returns the lines they complete, in order, then `.tooLong` if the limit was passed.
    public mutating func append<Bytes: Sequence>(_ bytes: Bytes) -> [Item] where Bytes.Element == UInt8 {
        guard !overflowed else { return [] }
        var items: [Item] = []
        for byte in bytes {
            if byte == 0x0A {
                if buffer.last == 0x0D { buffer.removeLast() }
                // A line of spaces was `bad_json` while an empty one was skipped (a newcomer's finding).
                if buffer.contains(where: { $0 != 0x20 && $0 != 0x09 && $0 != 0x0D }) { items.append(.line(buffer)) }
                buffer.removeAll(keepingCapacity: true)
            } else {
                buffer.append(byte)
                // One byte of slack for a "\r" before the newline.
                if buffer.count > maximumLineBytes + 1 || (buffer.count > maximumLineBytes && byte != 0x0D) {
                    overflowed = true
                    buffer = []
                    items.append(.tooLong)
                    return items
                }
            }
        }
        return items
    }
}
