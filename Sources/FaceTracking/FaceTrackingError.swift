import WinkCore

/// Errors of the face-tracking stage: the model file, or dlib/OpenCV failing.
public typealias FaceTrackingError = SubjectError<FaceTrackingErrorCode>

/// What went wrong, deciding the exit code; the error's subject is the model path, or the part that failed.
public enum FaceTrackingErrorCode: ExitCodeKind {
    /// The model file does not exist. Exit 78.
    case modelMissing
    /// The model file cannot be opened or read. Exit 78.
    case modelUnreadable
    /// The file is not a serialised dlib shape predictor (text, still-compressed `.bz2`, truncated). Exit 78.
    case modelNotDlib
    /// A dlib shape predictor, but not the 68-point one (e.g. the 5-point model). Exit 78.
    case modelWrongParts
    /// An eye-state model file (`--eye-model`) is missing, unreadable or not the model's shape. Exit 78.
    case eyeModelInvalid
    /// dlib or OpenCV failed on a frame. Exit 70.
    case `internal`

    /// 70 for `internal`, 78 for every model problem.
    public var exitCode: ExitCode { self == .internal ? .software : .configuration }
}
