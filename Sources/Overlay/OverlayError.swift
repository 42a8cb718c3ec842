import WinkCore

/// Errors of the overlay renderer: layouts, overlay images, outputs.
public struct OverlayError: ExitCodeError, Equatable {
    public enum Code: Sendable, Equatable {
        /// A layout or image file does not exist or cannot be read. Exit 66.
        case missing
        /// A file that is not a decodable PNG (corrupt, truncated, another format). Exit 65.
        case notDecodable
        /// A layout that is not valid JSON or names an unknown feature. Exit 78.
        case badLayout
        /// The output cannot be written. Exit 73 is not in SPEC.md, so 66... see exitCode.
        case output
    }

    public var code: Code
    /// The file concerned.
    public var path: String
    public var reason: String

    public init(_ code: Code, path: String, reason: String) {
        self.code = code
        self.path = path
        self.reason = reason
    }

    public var description: String { "\(path): \(reason)" }

    public var exitCode: ExitCode {
        switch code {
        case .missing: .noInput
        case .notDecodable: .dataError
        case .badLayout: .configuration
        case .output: .unavailable
        }
    }
}
