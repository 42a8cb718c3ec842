/// Which kind of source a `--source` argument names.
///
/// Decided by the name alone, so that a camera that is not plugged in yet can be waited for: nil (no
/// `--source`: the first V4L2 capture device) or a path under `/dev/` (a device node or a
/// `/dev/v4l/by-id` link) is a camera; anything else is a recording (a video file or a still image).
public enum SourceKind: Sendable, Equatable {
    /// A live V4L2 capture device (`V4L2Camera`).
    case camera
    /// A recorded file (`openMediaFile(path:)`: a video or a still image).
    case recording

    /// The kind `source` names (nil: the default camera).
    public init(source: String?) {
        guard let source else {
            self = .camera
            return
        }
        self = source.hasPrefix("/dev/") ? .camera : .recording
    }
}
