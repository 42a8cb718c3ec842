#if canImport(Glibc)
    import Glibc
#endif

/// `value` as `--help`, usage errors and configuration problems write a number: its description without a
/// trailing ".0" (`180`, `0.05`, `-1`, `1e+300`), so a Double limit reads as it was declared and every
/// message writes the same number the same way. Pure; thread-safe.
public func plainNumber(_ value: some CustomStringConvertible) -> String {
    let s = value.description
    return s.hasSuffix(".0") ? String(s.dropLast(2)) : s
}

/// `text` with its control characters (C0, DEL, C1) and line separators (U+2028, U+2029) written as
/// escapes (`\n`, `\r`, `\t`, `\u{1b}`), so that a file name, a key from a file or a client's text cannot
/// split a log line in two or send terminal escape sequences to whoever reads it. With `keepingNewlines`,
/// line feeds stay (a message of several lines, one per problem). Pure; thread-safe.
public func visibleControlCharacters(_ text: String, keepingNewlines: Bool = false) -> String {
    func hidden(_ scalar: Unicode.Scalar) -> Bool {
        (scalar.properties.generalCategory == .control || scalar == "\u{2028}" || scalar == "\u{2029}")
            && !(keepingNewlines && scalar == "\n")
    }
    guard text.unicodeScalars.contains(where: hidden) else { return text }
    var out = ""
    for scalar in text.unicodeScalars {
        guard hidden(scalar) else {
            out.unicodeScalars.append(scalar)
            continue
        }
        switch scalar {
        case "\n": out += "\\n"
        case "\r": out += "\\r"
        case "\t": out += "\\t"
        default: out += "\\u{\(String(scalar.value, radix: 16))}"
        }
    }
    return out
}

/// Writes all of `text` to the file descriptor `fd` with write(2), retrying after EINTR and partial writes.
/// Unlike `FileHandle.write`, which traps when the write fails (winkd died on its first log line once its
/// log's disk was full or the pipe it logged into had closed), a failure is returned, never fatal.
/// - Returns: nil when everything was written, else the errno (`EPIPE`: the reader went away, `ENOSPC`: no
///   space left). Thread-safe (one write(2) per call when the descriptor takes it whole: lines from
///   different threads do not interleave).
@discardableResult
public func writeAll(_ text: String, to fd: Int32) -> Int32? {
    Array(text.utf8).withUnsafeBytes { writeAll($0, to: fd) }
}

/// `writeAll(_:to:)` for bytes (a file's contents).
@discardableResult
public func writeAll(_ bytes: UnsafeRawBufferPointer, to fd: Int32) -> Int32? {
    var offset = 0
    while offset < bytes.count {
        let n = write(fd, bytes.baseAddress! + offset, bytes.count - offset)
        if n < 0 {
            if errno == EINTR { continue }
            return errno
        }
        if n == 0 { return EIO }
        offset += n
    }
    return nil
}

/// A write to standard output that failed for another reason than a reader gone away (EPIPE, which ends a
/// command quietly): a full disk, an I/O error. Exit 74; "standard output: no space left on the device".
public struct StandardOutputError: ExitCodeError {
    /// The errno of the failed write.
    public var code: Int32
    /// The error for the failed write's errno `code`.
    public init(code: Int32) { self.code = code }
    /// "standard output: " and the reason ("no space left on the device" for ENOSPC).
    public var description: String {
        "standard output: " + (code == ENOSPC ? "no space left on the device" : Errno(code: code).description)
    }
    /// 74 (`ioError`).
    public var exitCode: ExitCode { .ioError }
}
