import WinkCore

/// Errors of the face-tracking stage: the model file, or dlib/OpenCV failing.
public struct FaceTrackingError: ExitCodeError, Equatable {
    public enum Code: Sendable, Equatable {
        /// The model file does not exist. Exit 78.
        case modelMissing
        /// The model file cannot be opened or read. Exit 78.
        case modelUnreadable
        /// The file is not a serialised dlib shape predictor (text, still-compressed `.bz2`, truncated). Exit 78.
        case modelNotDlib
        /// A dlib shape predictor, but not the 68-point one (e.g. the 5-point model). Exit 78.
        case modelWrongParts
        /// dlib or OpenCV failed on a frame. Exit 70.
        case `internal`
    }

    public var code: Code
    /// The model path, or what failed.
    public var subject: String
    public var reason: String

    public init(_ code: Code, subject: String, reason: String) {
        self.code = code
        self.subject = subject
        self.reason = reason
    }

    public var description: String { "\(subject): \(reason)" }

    public var exitCode: ExitCode { code == .internal ? .software : .configuration }
}
