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
    /// 78 `EX_CONFIG`: a configuration or model file is missing or wrong.
    case configuration = 78
}

/// An error that maps to a `sysexits` code and carries the one line printed to stderr before exiting.
///
/// The message names the file or device and what is wrong with it, e.g.
/// `"/tmp/x.dat: not a dlib shape predictor (text file)"`.
public protocol ExitCodeError: Error, CustomStringConvertible {
    /// The `sysexits` code a program exits with when this error ends it.
    var exitCode: ExitCode { get }
}
