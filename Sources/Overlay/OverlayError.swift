import WinkCore

/// Errors of the overlay renderer: layouts, overlay images, outputs.
///
/// `description` is the one line printed before exiting: the file concerned and what is wrong with it.
public typealias OverlayError = SubjectError<OverlayErrorCode>

/// What went wrong, deciding the exit code; the error's subject is the file concerned (layout, image or output path).
public enum OverlayErrorCode: ExitCodeKind {
    /// A layout or image file does not exist, cannot be read, or is not a regular file (a FIFO, a device, a
    /// directory). Exit 66.
    case missing
    /// A file that is not a decodable PNG (corrupt, truncated, another format), or an image over the limits
    /// (`OverlayImage.maximumFileBytes`, `.maximumSide`, `.maximumPixels`). Exit 65.
    case notDecodable
    /// A layout that is not valid JSON, misses or mistypes a key, or names an unknown feature. Exit 78.
    case badLayout
    /// The output file cannot be created (no such directory, no permission, an unknown extension, no codec).
    /// Exit 73 (`EX_CANTCREAT`).
    case output
    /// The output file was created but writing it failed (a full disk, an I/O error); the incomplete file is
    /// removed. Exit 74 (`EX_IOERR`).
    case writeFailed
    /// OpenCV failed while drawing (out of memory). Exit 70.
    case `internal`

    /// 66 `missing`, 65 `notDecodable`, 78 `badLayout`, 73 `output`, 74 `writeFailed`, 70 `internal`.
    public var exitCode: ExitCode {
        switch self {
        case .missing: .noInput
        case .notDecodable: .dataError
        case .badLayout: .configuration
        case .output: .cannotCreate
        case .writeFailed: .ioError
        case .internal: .software
        }
    }
}
