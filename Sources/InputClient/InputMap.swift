/// A validated input map (SPEC.md "Input maps"): which face gestures press which keys.
///
/// All times are seconds of event time (the `time` field of event lines), except `repeat`'s `interval`,
/// which the map file gives in milliseconds.
public struct InputMap: Equatable, Sendable {
    /// The bindings, in file order.
    public var mappings: [Mapping]
    /// Seconds a face must have been present (`faceFound` without `faceLost`) before anything fires.
    /// Map key `safeStart`; default 1.0.
    public var safeStart: Double

    /// A map; `safeStart` in seconds of event time. Unvalidated (parsing validates).
    public init(mappings: [Mapping], safeStart: Double = 1.0) {
        self.mappings = mappings
        self.safeStart = safeStart
    }

    /// Every key and button any mapping can press, sorted by code, without duplicates.
    public var keys: [InputKey] {
        var seen = Set<InputKey>()
        for mapping in mappings {
            switch mapping.action {
            case .key(let key), .button(let key): seen.insert(key)
            case .command, .pause: break
            }
        }
        return seen.sorted { $0.code < $1.code }
    }

    /// Every event name a mapping refers to, plus `faceFound` and `faceLost` (which safe start needs),
    /// sorted; this is what the client subscribes to.
    public var eventNames: [String] {
        var names: Set<String> = ["faceFound", "faceLost"]
        for mapping in mappings { names.formUnion(mapping.trigger.names) }
        return names.sorted()
    }
}

/// One binding of a gesture to an action.
public struct Mapping: Equatable, Sendable {
    /// What the face does.
    public var trigger: Trigger
    /// What is injected.
    public var action: Action
    /// How the gesture's course maps to key presses.
    public var mode: Mode
    /// Seconds the gesture must last (event time) before the action fires; for one-shot events such as
    /// `blink`, their `duration` must reach it. Map key `minHold`; default 0.
    public var minHold: Double
    /// Seconds after a firing during which this mapping does not fire again. Map key `cooldown`; default 0.
    public var cooldown: Double

    /// A binding; `minHold` and `cooldown` in seconds of event time.
    public init(trigger: Trigger, action: Action, mode: Mode = .press, minHold: Double = 0, cooldown: Double = 0) {
        self.trigger = trigger
        self.action = action
        self.mode = mode
        self.minHold = minHold
        self.cooldown = cooldown
    }
}

/// The gesture a mapping listens for (the map's `event` string).
public enum Trigger: Equatable, Sendable {
    /// One event name: `"winkLeft"`. Held from `began` to `ended`, or instantaneous on `occurred`.
    case event(String)
    /// Names joined by `+`: `"winkLeft+smile"`, active while every member is active at once. It begins when
    /// the last member begins and ends when the first member ends; a one-shot member (`blink`) occurring
    /// while the others are held makes an instantaneous chord.
    case chord([String])
    /// Names joined by `,`: `"blink,blink"`, the occurrences (`began` or `occurred`) of these names in
    /// order with the first and last at most `within` seconds apart (map key `within`, default 0.6).
    /// Occurrences of names outside the sequence do not break it. The gesture starts at the last step and
    /// lasts as long as that step's event does (instantaneous for `blink`).
    case sequence([String], within: Double)

    /// The event names this trigger listens to.
    public var names: [String] {
        switch self {
        case .event(let name): [name]
        case .chord(let names), .sequence(let names, _): names
        }
    }
}

/// What a mapping injects.
public enum Action: Equatable, Sendable {
    /// A keyboard key (`{"key": "KEY_ENTER"}`).
    case key(InputKey)
    /// A mouse button (`{"button": "BTN_LEFT"}`).
    case button(InputKey)
    /// A program and its arguments, started with `posix_spawnp(3)` without a shell
    /// (`{"command": ["notify-send", "hi"]}`).
    case command([String])
    /// Turns every other mapping off, or back on (`{"pause": true}`).
    case pause
}

/// How a gesture's course becomes key events.
public enum Mode: Equatable, Sendable {
    /// A tap (down, up) when the gesture begins (or occurs, for one-shot events), once per gesture.
    case press
    /// Down when the gesture begins, up when it ends.
    case hold
    /// Each gesture flips the key: down, then up at the next gesture.
    case toggle
    /// A tap when the gesture begins and every `interval` seconds while it is held
    /// (map key `interval`, in milliseconds; default 250 ms).
    case `repeat`(interval: Double)
}
