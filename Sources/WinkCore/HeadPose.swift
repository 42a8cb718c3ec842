/// Head orientation in degrees, relative to facing the camera.
///
/// - `yaw`: positive when the person turns toward their own left (the image's right in an unmirrored
///   camera image).
/// - `pitch`: positive when the person looks up.
/// - `roll`: in-plane rotation, positive when the head tilts clockwise in the image (the person's
///   right eye, on the image's left, goes up).
public struct HeadPose: Sendable, Equatable, Codable {
    public var yaw: Float
    public var pitch: Float
    public var roll: Float

    public init(yaw: Float, pitch: Float, roll: Float) {
        self.yaw = yaw
        self.pitch = pitch
        self.roll = roll
    }

    public static let frontal = HeadPose(yaw: 0, pitch: 0, roll: 0)
}
