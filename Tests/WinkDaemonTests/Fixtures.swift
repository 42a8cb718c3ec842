import Foundation

/// Paths of the shared fixtures, read in place from `../shared/fixtures` beside the repository.
enum Fixtures {
    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()
    static let root = repository.deletingLastPathComponent().appendingPathComponent("shared/fixtures")

    static func path(_ relative: String) -> String { root.appendingPathComponent(relative).path }
    static func video(_ name: String) -> String { path("video/" + name) }
    static func labels(_ name: String) -> String { path("labels/" + name + ".labels.json") }
    static let model =
        ProcessInfo.processInfo.environment["WINK_MODEL"] ?? "/usr/share/dlib/shape_predictor_68_face_landmarks.dat"
}
