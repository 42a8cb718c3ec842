import CEvdev

/// A key or button of the Linux input subsystem: its name from `linux/input-event-codes.h`
/// (`KEY_LEFT`, `BTN_LEFT`) and its `EV_KEY` code (`KEY_LEFT` = 105, `BTN_LEFT` = 0x110).
public struct InputKey: Hashable, Sendable, CustomStringConvertible {
    /// The input-event name, e.g. `KEY_ENTER`.
    public var name: String
    /// The `EV_KEY` event code.
    public var code: UInt16

    /// A key from its name and `EV_KEY` code, unchecked (see `init?(named:)`).
    public init(name: String, code: UInt16) {
        self.name = name
        self.code = code
    }

    /// The key with this input-event name, resolved with `libevdev_event_code_from_name(3)` for `EV_KEY`;
    /// nil when libevdev does not know the name. Thread-safe.
    public init?(named name: String) {
        let code = cev_code_from_name(UInt32(EV_KEY), name)
        guard code >= 0 else { return nil }
        self.init(name: name, code: UInt16(code))
    }

    /// `name`.
    public var description: String { name }

    /// `BTN_LEFT`, `BTN_RIGHT`, `BTN_MIDDLE`: every virtual device has them, so it counts as a mouse.
    public static let mouseButtons: [InputKey] = [
        InputKey(name: "BTN_LEFT", code: UInt16(BTN_LEFT)),
        InputKey(name: "BTN_RIGHT", code: UInt16(BTN_RIGHT)),
        InputKey(name: "BTN_MIDDLE", code: UInt16(BTN_MIDDLE)),
    ]
}

/// Event types and codes of `linux/input-event-codes.h` used by the uinput backend.
public enum LinuxInputCode {
    /// `EV_SYN`: synchronisation events.
    public static let evSyn = UInt16(EV_SYN)
    /// `EV_KEY`: keys and buttons (value 1 down, 0 up).
    public static let evKey = UInt16(EV_KEY)
    /// `EV_REL`: relative axes.
    public static let evRel = UInt16(EV_REL)
    /// `SYN_REPORT`: ends one atomic group of events.
    public static let synReport = UInt16(SYN_REPORT)
    /// `REL_X`, `REL_Y`: relative pointer motion; with the buttons they make the device a mouse.
    public static let relX = UInt16(REL_X)
    /// `REL_Y`: vertical relative motion.
    public static let relY = UInt16(REL_Y)
}
