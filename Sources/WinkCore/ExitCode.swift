/// Process exit codes from BSD `sysexits(3)`, as SPEC.md requires.
public enum ExitCode: Int32, Sendable, Error {
    /// 0: success.
    case ok = 0
    /// 1: the command ran but its check failed (`winkctl evaluate --min-f1`).
    case failure = 1
    /// 64 `EX_USAGE`: the command was used incorrectly (bad flag or argument).
    case usage = 64
    /// 65 `EX_DATAERR`: the input data was incorrect (a file that is not a video, a corrupt PNG).
    case dataError = 65
    /// 66 `EX_NOINPUT`: an input file did not exist or was not readable.
    case noInput = 66
    /// 69 `EX_UNAVAILABLE`: a service or device is unavailable (no camera, no /dev/uinput).
    case unavailable = 69
    /// 70 `EX_SOFTWARE`: an internal software error.
    case software = 70
    /// 73 `EX_CANTCREAT`: an output file cannot be created (no such directory, no permission, a directory
    /// in its place).
    case cannotCreate = 73
    /// 74 `EX_IOERR`: an error while writing output (a full disk, standard output closed with an error).
    case ioError = 74
    /// 78 `EX_CONFIG`: a configuration or model file is missing or wrong.
    case configuration = 78
}

extension ExitCode {
    /// The codes as `--help` lists them (SPEC.md): one line.
    public static let summary = "exit codes (sysexits): 0 ok, 1 check failed (evaluate --min-f1), 64 usage, "
        + "65 bad input data, 66 input missing or unreadable, 69 device or socket unavailable, 70 internal "
        + "(also: codec plugin libWinkCodecs.so not loadable), 73 cannot create an output file, 74 output write error "
        + "(no space left), 78 bad configuration or model file"
    /// winkd's codes (no check that can fail): `summary` without 1.
    public static let daemonSummary = summary.replacingOccurrences(of: "1 check failed (evaluate --min-f1), ", with: "")
}

/// An error that maps to a `sysexits` code and carries the one line printed to stderr before exiting.
///
/// The message names the file or device and what is wrong with it, e.g.
/// `"/tmp/x.dat: not a dlib shape predictor (text file)"`.
public protocol ExitCodeError: Error, CustomStringConvertible {
    /// The `sysexits` code a program exits with when this error ends it.
    var exitCode: ExitCode { get }
}

/// The kind of a failure, which decides the exit code: each `SubjectError`'s `Code` enum.
public protocol ExitCodeKind: Sendable, Equatable {
    /// The `sysexits` code a program exits with when an error of this kind ends it.
    var exitCode: ExitCode { get }
    /// The text printed before exiting; by default the one line `subject: reason`.
    func describe(subject: String, reason: String) -> String
}

extension ExitCodeKind {
    /// The one line `subject: reason`.
    public func describe(subject: String, reason: String) -> String { "\(subject): \(reason)" }
}

/// An `ExitCodeError` about one thing a person can name: a file, a device, a socket path, or a part such
/// as "face detector". `description` (what is printed before exiting) names it and says what is wrong;
/// the exit code follows the kind. The modules' errors are this type with their own `Code` enums
/// (`CaptureError` = `SubjectError<CaptureErrorCode>`, ...).
public struct SubjectError<Code: ExitCodeKind>: ExitCodeError, Equatable {
    /// The kind of failure, which decides the exit code.
    public var code: Code
    /// The file, device or socket path, or the part that failed.
    public var subject: String
    /// What is wrong, for a person, without the subject (e.g. "no such file").
    public var reason: String

    /// An error of kind `code` about `subject`, saying `reason`.
    public init(_ code: Code, subject: String, reason: String) {
        self.code = code
        self.subject = subject
        self.reason = reason
    }

    /// The subject (a name, never several lines) with its control characters escaped.
    public var description: String { code.describe(subject: visibleControlCharacters(subject), reason: reason) }
    /// The exit code of `code`.
    public var exitCode: ExitCode { code.exitCode }
}

/// An error of several problems, one line each (a configuration file's, an input map's): printed as those
/// lines, each with the program's name; any other error is printed on one line, its control characters
/// (a newline in a file name) escaped.
public protocol MultiLineError: ExitCodeError {
    /// One line per problem, without the program's name.
    var lines: [String] { get }
}

/// An error's one-line text for logs and status lines: an `ExitCodeError`'s own `description` (which
/// names the thing and what is wrong), else Swift's description of the error.
public func describeError(_ error: Error) -> String {
    (error as? ExitCodeError)?.description ?? "\(error)"
}

/// An error's one-line text where `subject` is already named beside it (a status line's `source`, so the
/// log does not say "/dev/video10: /dev/video10: ..."): a `SubjectError` about `subject` gives its reason
/// alone; any other error its `describeError(_:)` text.
public func describeError(_ error: Error, besides subject: String) -> String {
    if let named = error as? any SubjectNaming, named.subject == subject { return named.reason }
    return describeError(error)
}

/// A message's text where `subject` is already named beside it: "PATH: no such file" with `subject` PATH
/// gives "no such file"; a message that does not start with the subject is returned whole. For messages that
/// are text already (an error's text kept in a status or a connection's end); an error itself goes through
/// `describeError(_:besides:)`.
public func describeMessage(_ message: String, besides subject: String) -> String {
    message.hasPrefix(subject + ": ") ? String(message.dropFirst(subject.count + 2)) : message
}

/// An error about one named thing (`SubjectError`), seen without its `Code` type.
public protocol SubjectNaming {
    /// The file, device or socket path, or the part that failed.
    var subject: String { get }
    /// What is wrong, without the subject.
    var reason: String { get }
}

extension SubjectError: SubjectNaming {}
