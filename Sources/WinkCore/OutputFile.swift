import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Errors of output files (a plot, a profile, an overlaid image or video): the subject is the file.
public typealias OutputFileError = SubjectError<OutputFileErrorCode>

/// Why an output file failed, deciding the exit code (SPEC.md: 73 cannot create an output file, 74 I/O
/// error while writing).
public enum OutputFileErrorCode: ExitCodeKind {
    /// It cannot be created: no such directory, no permission, a directory in its place. Exit 73.
    case cannotCreate
    /// It was created but writing it failed: no space left, an I/O error. Exit 74.
    case writeFailed

    /// 73 for `cannotCreate`, 74 for `writeFailed`.
    public var exitCode: ExitCode {
        switch self {
        case .cannotCreate: .cannotCreate
        case .writeFailed: .ioError
        }
    }
}

/// Checks on an output path made before any work, so that a long run does not end in "cannot create".
public enum OutputFile {
    /// Checks that a file can be created at `path`: its directory exists, is a directory and may be written
    /// and searched by this process, and nothing but a regular file is in the way. An existing regular file
    /// is fine (it is replaced; through a symbolic link, the link's target is). Nothing is created.
    /// - Throws: `OutputFileError.cannotCreate` (73) saying which: "no such directory DIR", "DIR is not a
    ///   directory", "no permission to create files in DIR", "DIR is on a read-only file system", "is a
    ///   directory", "is a device, not a regular
    ///   file", "is a FIFO, not a regular file".
    public static func checkCreatable(_ path: String) throws {
        var st = stat()
        if stat(path, &st) == 0 {  // follows a symbolic link: its target is what gets written
            switch st.st_mode & S_IFMT {
            case S_IFREG: break
            case S_IFDIR: throw OutputFileError(.cannotCreate, subject: path, reason: "is a directory")
            case S_IFCHR, S_IFBLK:
                throw OutputFileError(.cannotCreate, subject: path, reason: "is a device, not a regular file")
            case S_IFIFO: throw OutputFileError(.cannotCreate, subject: path, reason: "is a FIFO, not a regular file")
            default: throw OutputFileError(.cannotCreate, subject: path, reason: "is not a regular file")
            }
        }
        let directory = Self.directory(of: Self.resolved(path))
        guard stat(directory, &st) == 0 else {
            throw OutputFileError(.cannotCreate, subject: path, reason: "no such directory \(directory)")
        }
        guard (st.st_mode & S_IFMT) == S_IFDIR else {
            throw OutputFileError(.cannotCreate, subject: path, reason: "\(directory) is not a directory")
        }
        guard access(directory, W_OK | X_OK) == 0 else {
            // A read-only mount is not a matter of permission (it was called one).
            let reason = errno == EROFS ? "\(directory) is on a read-only file system"
                : "no permission to create files in \(directory)"
            throw OutputFileError(.cannotCreate, subject: path, reason: reason)
        }
    }

    /// The error for a failed create or write of `path` with `errno` `code`: ENOSPC, EDQUOT, EIO, EFBIG
    /// are a failed write (74: "no space left on the device", "disk quota exceeded", ...), anything else a
    /// failed create (73, with `checkCreatable`'s reason when it finds one, else the errno's text).
    public static func error(for path: String, errno code: Int32) -> OutputFileError {
        switch code {
        case ENOSPC: return OutputFileError(.writeFailed, subject: path, reason: "no space left on the device")
        case EDQUOT: return OutputFileError(.writeFailed, subject: path, reason: "disk quota exceeded")
        case EFBIG: return OutputFileError(.writeFailed, subject: path, reason: "file too large")
        case EIO: return OutputFileError(.writeFailed, subject: path, reason: "I/O error while writing")
        default:
            do {
                try checkCreatable(path)
            } catch let error as OutputFileError {
                return error
            } catch {}
            return OutputFileError(
                .cannotCreate, subject: path, reason: "cannot create the file: \(Errno(code: code).message)")
        }
    }

    /// `path` with a symbolic link at its end followed to the file it names (the file to write, so that
    /// replacing it atomically keeps the link); `path` itself when it is not a link.
    public static func resolved(_ path: String) -> String {
        var st = stat()
        guard lstat(path, &st) == 0, (st.st_mode & S_IFMT) == S_IFLNK,
              let real = realpath(path, nil) else { return path }
        defer { free(real) }
        return String(cString: real)
    }

    /// The directory a relative or absolute `path` is created in ("." for a bare name).
    static func directory(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        let directory = String(path[..<slash])
        return directory.isEmpty ? "/" : directory
    }
}

/// An output file written under a temporary name beside its destination and renamed over it only once it
/// is complete (rename(2) in one directory is atomic): a run that fails (a full disk), is stopped (Ctrl-C)
/// or crashes leaves whatever was at the destination as it was, never half of a new file.
///
/// The temporary file is `.NAME.partial-PID-RANDOM.EXT` in the destination's directory (a symbolic link at the
/// destination is followed, so the link stays and its target is replaced); it keeps the extension, from
/// which the writers choose the format. It is created empty at once (exclusively, with the destination's
/// permission bits when it exists, else 0666 less the umask) and removed by `discard()` or deinit unless
/// `commit()` renamed it. A process killed outright (SIGKILL, a power cut) cannot remove its own: the next
/// output to the same destination removes such leftovers (`removeLeftovers`), so a run killed again and
/// again does not fill the disk with hidden partial videos. Not thread-safe.
public final class PendingOutput {
    /// The path the user named (named in every error).
    public let destination: String
    /// The file to write now.
    public let temporary: String
    /// The file `commit()` replaces: `destination` with a link at its end followed.
    private let target: String
    private var pending = true
    /// The handlers of SIGINT, SIGTERM and SIGHUP that `deferringSignals` replaced, to restore.
    private var replacedHandlers: [(Int32, __sighandler_t?)] = []

    /// Thrown by `commit()` when a signal deferred during the write asked to stop and the process's own
    /// handler (not the default action) took it, or `stopRequested` says a stop was asked: the output was
    /// discarded, the destination kept.
    public struct Stopped: Error, Equatable {
        /// The signal number that asked to stop (SIGINT, SIGTERM or SIGHUP), or what `stopRequested` returned.
        public var signal: Int32
        /// A stop by `signal`.
        public init(signal: Int32) { self.signal = signal }
    }

    /// - Parameter deferringSignals: for a short write (a still, a plot): SIGINT, SIGTERM and SIGHUP are held
    ///   off until `commit()` or `discard()`, which then discard the output and raise the signal again, so a
    ///   stop during the write leaves neither half a file nor the partial one (analyze --plot left its
    ///   `.partial` file when stopped while drawing). A long write (a video) handles signals itself.
    /// - Throws: `OutputFileError` as `OutputFile.checkCreatable(destination)`, or as
    ///   `OutputFile.error(for:errno:)` when the temporary file cannot be created (73; 74 on a full disk).
    public init(destination: String, deferringSignals: Bool = false) throws {
        try OutputFile.checkCreatable(destination)
        self.destination = destination
        target = OutputFile.resolved(destination)
        let directory = OutputFile.directory(of: target)
        let name = target.split(separator: "/").last.map(String.init) ?? target
        // The extension as the writers read it (`.png` alone is a PNG named ".png").
        let dot = name.lastIndex(of: ".")
        let fullStem = dot.map { String(name[..<$0]) } ?? name
        var stem = fullStem
        let ext = dot.map { String(name[$0...]) } ?? ""
        let unique = String(UInt32.random(in: 0...UInt32.max), radix: 16)
        let suffix = ".partial-\(getpid())-\(unique)\(ext)"
        // Within NAME_MAX (255 bytes) however long the name (a legal 240-byte name failed with ENAMETOOLONG).
        while 1 + stem.utf8.count + suffix.utf8.count > 255 && !stem.isEmpty { stem.removeLast() }
        temporary = (directory == "/" ? "/" : directory + "/") + ".\(stem)\(suffix)"
        if deferringSignals {  // before the file exists: a signal from here on is held off
            pendingOutputSignal = 0
            for number in [SIGINT, SIGTERM, SIGHUP] {
                replacedHandlers.append((number, signal(number) { pendingOutputSignal = $0 }))
            }
        }
        var st = stat()
        let existing = stat(target, &st) == 0 ? st.st_mode & 0o7777 : nil
        let fd = open(temporary, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, existing ?? 0o666)
        guard fd >= 0 else {
            let code = errno
            pending = false
            _ = releaseSignals()
            throw OutputFile.error(for: destination, errno: code)
        }
        if existing != nil {
            // The old file's owner and group too (a newcomer's root:daemon 0640 output became root:root): as far
            // as this process may give them, the group alone when the owner cannot be kept.
            if fchown(fd, st.st_uid, st.st_gid) != 0 { _ = fchown(fd, uid_t.max, st.st_gid) }
        }
        if let existing { _ = fchmod(fd, existing) }  // the umask applied to open's mode; keep the old bits
        close(fd)
        Self.removeLeftovers(in: directory, stem: fullStem, extension: ext)
    }

    /// How long a leftover must have been untouched before it is removed: a writer that is alive (in another
    /// PID namespace sharing the folder, say, whose PID this process cannot see) writes more often.
    public static let leftoverAge: Double = 60

    /// Removes the regular files `.STEM.partial-<pid>-<hex>EXT` in `directory` (as `init` names them: the pid
    /// in decimal ASCII digits without a leading zero, the random part in lower-case hex; STEM shortened for a
    /// long name, so a shortened leftover's stem is a prefix of `stem` in a name of 252-255 bytes) whose
    /// process no longer exists (kill(pid, 0) says ESRCH) and that were last modified at least `leftoverAge`
    /// seconds ago: the temporary files of outputs to the same destination whose run was killed before it
    /// could remove them. Anything else (this process's, a live process's, a recent one, another name's) is
    /// left alone.
    static func removeLeftovers(in directory: String, stem: String, extension ext: String,
                                now: Double = Date().timeIntervalSince1970) {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: directory) else { return }
        let marker = ".partial-"
        for name in names where name.hasPrefix(".") && name.hasSuffix(ext) && name.utf8.count <= 255 {
            guard let at = name.range(of: marker, options: .backwards) else { continue }
            let leftoverStem = name[name.index(after: name.startIndex)..<at.lowerBound]
            let shortened = name.utf8.count >= 252 && !leftoverStem.isEmpty && stem.hasPrefix(leftoverStem)
            guard leftoverStem == stem || shortened else { continue }
            let middle = name[at.upperBound...].dropLast(ext.count)  // "<pid>-<hex>"
            let parts = middle.split(separator: "-", omittingEmptySubsequences: false)
            guard parts.count == 2, let digits = parts.first, let hex = parts.last,
                  (1...10).contains(digits.count), digits.first != "0",
                  digits.unicodeScalars.allSatisfy({ ("0"..."9").contains($0) }),
                  (1...8).contains(hex.count),
                  hex.unicodeScalars.allSatisfy({ ("0"..."9").contains($0) || ("a"..."f").contains($0) }),
                  let pid = pid_t(digits), pid != getpid()
            else { continue }
            guard kill(pid, 0) == -1 && errno == ESRCH else { continue }
            let path = (directory == "/" ? "/" : directory + "/") + name
            var st = stat()
            guard lstat(path, &st) == 0, (st.st_mode & S_IFMT) == S_IFREG,
                  now - Double(st.st_mtim.tv_sec) >= leftoverAge else { continue }
            unlink(path)
        }
    }

    /// The signal a command's own handler has taken as a request to stop (`winkctl overlay` sets this),
    /// or nil, given the destination about to be replaced: `commit()` then discards instead. Set once,
    /// before any output.
    nonisolated(unsafe) public static var stopRequested: ((String) -> Int32?)?

    deinit {
        discard()
        _ = releaseSignals()
    }

    /// Renames the finished temporary file over the destination.
    /// - Throws: `OutputFileError` (`OutputFile.error(for:errno:)`) when the rename fails; the temporary file
    ///   is then removed and the destination left as it was. `Stopped` when a deferred signal came and the
    ///   process handles it itself (under the default action the process ends by it, the output discarded).
    public func commit() throws {
        guard pending else { return }
        if pendingOutputSignal != 0 && !replacedHandlers.isEmpty {
            removeTemporary()
            if let stopped = releaseSignals() { throw Stopped(signal: stopped) }
            return
        }
        if let stopped = Self.stopRequested?(destination) {
            removeTemporary()
            _ = releaseSignals()
            throw Stopped(signal: stopped)
        }
        pending = false
        guard rename(temporary, target) == 0 else {
            let code = errno
            unlink(temporary)
            _ = releaseSignals()
            throw OutputFile.error(for: destination, errno: code)
        }
        _ = releaseSignals()
    }

    /// Removes the temporary file (an unfinished or failed output); the destination stays as it was.
    /// Idempotent; nothing after `commit()`.
    public func discard() {
        guard pending else { return }
        removeTemporary()
        _ = releaseSignals()
    }

    /// Ends the output without a rename: the temporary file is removed.
    private func removeTemporary() {
        pending = false
        var st = stat()
        if lstat(temporary, &st) == 0 && (st.st_mode & S_IFMT) == S_IFREG { unlink(temporary) }
    }

    /// Puts back the handlers `deferringSignals` replaced and raises a signal that came meanwhile (the
    /// default action ends the process here); returns that signal when a handler took it, else nil.
    private func releaseSignals() -> Int32? {
        guard !replacedHandlers.isEmpty else { return nil }
        for (number, handler) in replacedHandlers { signal(number, handler) }
        replacedHandlers = []
        let caught = pendingOutputSignal
        pendingOutputSignal = 0
        guard caught != 0 else { return nil }
        raise(caught)
        return caught
    }
}

/// The signal that came while a `PendingOutput` deferred signals, 0 if none (set by its handler).
private var pendingOutputSignal: sig_atomic_t = 0

/// The limit on the JSON files winkd and winkctl read whole (configuration, calibration profile, input map,
/// labels): 16 MiB, far above any real one (a labels file for an hour at 30 fps is under 1 MiB), so that a
/// wrong or hostile file of hundreds of MB is refused with one line instead of taking its size several
/// times over in memory.
public let maximumSettingsFileBytes = 16 << 20

/// The size in bytes of the regular file at `path` (symbolic links followed), or nil when it is not one.
public func regularFileSize(_ path: String) -> Int? {
    var st = stat()
    guard stat(path, &st) == 0, (st.st_mode & S_IFMT) == S_IFREG else { return nil }
    return Int(st.st_size)
}

/// The reason to give when a settings file is over `maximumSettingsFileBytes` ("the file is N bytes, over
/// the limit of 16 MiB for a KIND"), or nil when it is not (or is not a regular file).
public func oversizedSettingsFile(_ path: String, kind: String) -> String? {
    guard let size = regularFileSize(path), size > maximumSettingsFileBytes else { return nil }
    return "the file is \(size) bytes, over the limit of 16 MiB for \(kind)"
}

/// Why the existing `path` (symbolic links followed) is not a regular file to read settings from ("not a
/// regular file (a FIFO)": reading a FIFO without a writer blocks for ever, which froze winkd's frame
/// thread on a SIGHUP reload), or nil when it is a regular file or does not exist.
public func nonRegularFileReason(_ path: String) -> String? {
    var st = stat()
    guard stat(path, &st) == 0 else { return nil }
    switch st.st_mode & S_IFMT {
    case S_IFREG: return nil
    case S_IFDIR: return "is a directory, not a file"
    case S_IFIFO: return "not a regular file (a FIFO)"
    case S_IFCHR, S_IFBLK: return "not a regular file (a device)"
    case S_IFSOCK: return "not a regular file (a socket)"
    default: return "not a regular file"
    }
}

/// Why the existing `path` cannot be read, for the line that says so ("cannot read the input map
/// (EACCES: Permission denied)"): the `errno` of opening it, or of reading its first byte (a directory opens
/// but does not read); nil when both succeed (it became readable meanwhile) or it does not exist. Called
/// after `FileManager.contents(atPath:)` returned nil, which gives no reason.
public func readFailure(_ path: String) -> Errno? {
    let fd = open(path, O_RDONLY | O_CLOEXEC)
    guard fd >= 0 else { return Errno.current }
    defer { close(fd) }
    var byte: UInt8 = 0
    return read(fd, &byte, 1) < 0 ? Errno.current : nil
}

/// `readFailure(path)` as the end of a reader's line: " (EACCES: Permission denied)", or "" when no call
/// failed.
public func readFailureNote(_ path: String) -> String { readFailure(path).map { " (\($0))" } ?? "" }

/// Where `path` points when it is a symbolic link whose target does not exist (a dotfiles folder moved), for
/// "PATH: a symbolic link to TARGET, which does not exist"; nil when it is not a link or its target exists
/// (`stat` fails with ENOENT only for a missing target; a loop is ELOOP, a reading problem instead).
public func danglingLinkTarget(_ path: String) -> String? {
    var st = stat()
    guard stat(path, &st) != 0, errno == ENOENT else { return nil }
    return try? FileManager.default.destinationOfSymbolicLink(atPath: path)
}
