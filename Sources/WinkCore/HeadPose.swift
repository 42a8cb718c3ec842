/// Head orientation in degrees, relative to facing the camera.
///
/// - `yaw`: positive when the person turns toward their own left (the image's right in an unmirrored
///   camera image).
/// - `pitch`: positive when the person looks up.
/// - `roll`: in-plane rotation, positive when the head tilts clockwise in the image (the person's
///   right eye, on the image's left, goes up).
public struct HeadPose: Sendable, Equatable, Codable {
    /// Degrees; positive when the person turns toward their own left.
    public var yaw: Float
    /// Degrees; positive when the person looks up.
    public var pitch: Float
    /// Degrees; positive when the head tilts clockwise in the image.
    public var roll: Float

    /// A pose from three angles in degrees.
    public init(yaw: Float, pitch: Float, roll: Float) {
        self.yaw = yaw
        self.pitch = pitch
        self.roll = roll
    }

    /// Facing the camera: every angle 0.
    public static let frontal = HeadPose(yaw: 0, pitch: 0, roll: 0)
}
