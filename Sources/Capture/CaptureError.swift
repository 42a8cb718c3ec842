import WinkCore

/// Everything that can go wrong opening or reading a frame source.
///
/// `description` is the one line printed before exiting: it names the file or device and what is wrong.
public typealias CaptureError = SubjectError<CaptureErrorCode>

/// What went wrong, deciding the exit code; the error's subject is the file or device path.
public enum CaptureErrorCode: ExitCodeKind {
    /// The file or device does not exist (`ENOENT`). Exit 66.
    case missing
    /// It exists but cannot be read or opened (`EACCES`, a directory). Exit 66.
    case unreadable
    /// It was read but is not a video or image that can be decoded. Exit 65.
    case notMedia
    /// The camera is held by another program (`EBUSY`). Exit 69.
    case busy
    /// The camera went away (`ENODEV`, unplugged). Exit 69.
    case disconnected
    /// No frame arrived within the timeout. Exit 69.
    case timeout
    /// The device offers no format winkd can use, or refused the one chosen. Exit 69.
    case unsupported
    /// There is no camera at all. Exit 69.
    case noDevice
    /// Any other system call failure, with its errno. Exit 69.
    case system(errno: Int32)
    /// A decoder or library failure. Exit 70.
    case `internal`

    /// 66 for `missing`/`unreadable`, 65 for `notMedia`, 70 for `internal`, 69 for the rest.
    public var exitCode: ExitCode {
        switch self {
        case .missing, .unreadable: .noInput
        case .notMedia: .dataError
        case .busy, .disconnected, .timeout, .unsupported, .noDevice, .system: .unavailable
        case .internal: .software
        }
    }
}
