import WinkCore

/// The input map as a state machine: decoded event lines and clock ticks in, key actions out.
///
/// Pure and clock-injected: it never reads a clock. Time is the event time of SPEC.md (`time`, seconds from
/// the source's first frame), taken from each event and from `tick(time:)`, which the caller uses to move
/// time on between events (for `minHold` and `repeat`). So a recorded event stream replays to the same
/// actions every time.
///
/// Rules (beyond each mapping's `Mode`, see `Mapping`):
/// - Safe start: a gesture that starts before a face has been present for `InputMap.safeStart` seconds
///   (measured from `faceFound`; from the first expression event when the stream began mid-face) fires
///   nothing, even if it is held past that point.
/// - A gesture fires at most once (no repeat until released), except `repeat` mode's taps.
/// - `minHold`: the action fires when the gesture has lasted `minHold` seconds; a shorter gesture fires
///   nothing. `cooldown`: a mapping does not fire within `cooldown` seconds of its previous firing.
/// - Pause (`{"pause": true}`) lets up every key other mappings hold and ignores them until unpaused;
///   a gesture already under way when unpausing stays ignored until it ends.
/// - `faceLost` ends every gesture and lets up every key (toggles included), as SPEC.md resets expression
///   state on loss; `releaseAll()` does the same for a lost connection and forgets the stream's state.
/// - A mapping of `faceFound` or `faceLost` itself fires at that moment (after the keys are let up, for
///   `faceLost`), whatever the safe start; pause and cooldown apply.
/// - A key held by several mappings is pressed once and released when the last lets go.
///
/// Not thread-safe: drive it from one thread.
public final class MappingEngine {
    /// The validated map this engine runs.
    public let map: InputMap
    private let injector: Injector

    /// Whether a pause gesture has turned the other mappings off.
    public private(set) var isPaused = false

    private var now: Double?
    private var faceSince: Double?
    private var active: [String: Double] = [:]
    private var states: [MappingState]
    private var downCount: [InputKey: Int] = [:]

    /// Per-mapping state; `start` is set while a held gesture is under way.
    struct MappingState {
        var start: Double?
        var blocked = false
        var fired = false
        var down = false
        var nextRepeat: Double?
        var lastFire: Double?
        var history: [(name: String, time: Double)] = []
        var endsWithEvent: String?
    }

    /// An engine for `map`, every mapping idle, sending actions to `injector`.
    public init(map: InputMap, injector: Injector) {
        self.map = map
        self.injector = injector
        states = Array(repeating: MappingState(), count: map.mappings.count)
    }

    /// Keys and buttons currently down, sorted by code.
    public var heldKeys: [InputKey] { downCount.keys.sorted { $0.code < $1.code } }

    /// Feeds one event line. Events must come in stream order; one older than the last seen time is
    /// treated as happening at the last seen time.
    public func handle(_ event: ExpressionEvent) {
        let time = max(event.time, now ?? event.time)
        advance(to: time)
        switch event.event {
        case EventName.faceFound:
            if faceSince == nil { faceSince = time }
            faceMoment(EventName.faceFound, at: time)
        case EventName.faceLost:
            faceLost(at: time)
            faceMoment(EventName.faceLost, at: time)
        default:
            if faceSince == nil { faceSince = time }
            switch event.phase {
            case .began?:
                guard active[event.event] == nil else { return }
                active[event.event] = time
                for index in states.indices { began(event.event, at: time, mapping: index) }
            case .ended?:
                guard active.removeValue(forKey: event.event) != nil else { return }
                for index in states.indices { ended(event.event, at: time, mapping: index) }
            case .occurred?:
                for index in states.indices {
                    occurred(event.event, at: time, duration: event.duration ?? 0, mapping: index)
                }
            case nil:
                break
            }
        }
    }

    /// Moves event time on to `time` (seconds) without an event: fires `minHold` gestures that have now
    /// lasted long enough and `repeat` taps that are due. Earlier times are ignored.
    public func tick(time: Double) {
        guard let now, time > now else {
            if self.now == nil { self.now = time }
            return
        }
        advance(to: time)
    }

    /// The stream is gone (EOF, `bye`, a broken connection): lets up every key that is down and forgets
    /// the stream's state (face presence, gestures, toggles, cooldowns). The pause state is kept.
    public func releaseAll() {
        for key in heldKeys { injector.release(key) }
        downCount = [:]
        states = Array(repeating: MappingState(), count: map.mappings.count)
        active = [:]
        faceSince = nil
        now = nil
    }

    // MARK: - Triggers: events to gesture edges

    private func began(_ name: String, at time: Double, mapping index: Int) {
        switch map.mappings[index].trigger {
        case .event(let n) where n == name:
            gestureBegan(index, at: time)
        case .chord(let names) where names.contains(name):
            if states[index].start == nil, names.allSatisfy({ active[$0] != nil }) { gestureBegan(index, at: time) }
        case .sequence(let names, let within) where names.contains(name):
            if sequenceStep(index, name: name, at: time, names: names, within: within) {
                states[index].endsWithEvent = name
                gestureBegan(index, at: time)
            }
        default:
            break
        }
    }

    private func ended(_ name: String, at time: Double, mapping index: Int) {
        guard states[index].start != nil else { return }
        switch map.mappings[index].trigger {
        case .event(let n) where n == name: gestureEnded(index)
        case .chord(let names) where names.contains(name): gestureEnded(index)
        case .sequence where states[index].endsWithEvent == name: gestureEnded(index)
        default: break
        }
    }

    private func occurred(_ name: String, at time: Double, duration: Double, mapping index: Int) {
        switch map.mappings[index].trigger {
        case .event(let n) where n == name:
            gestureInstant(index, at: time, duration: duration)
        case .chord(let names) where names.contains(name):
            if names.allSatisfy({ $0 == name || active[$0] != nil }) {
                gestureInstant(index, at: time, duration: duration)
            }
        case .sequence(let names, let within) where names.contains(name):
            if sequenceStep(index, name: name, at: time, names: names, within: within) {
                gestureInstant(index, at: time, duration: duration)
            }
        default:
            break
        }
    }

    /// Records an occurrence for a sequence; true when it completes the sequence within the window.
    private func sequenceStep(_ index: Int, name: String, at time: Double, names: [String], within: Double) -> Bool {
        var history = states[index].history
        history.append((name, time))
        if history.count > names.count { history.removeFirst(history.count - names.count) }
        let matched = history.map(\.name) == names && time - history[0].time <= within + 1e-9
        states[index].history = matched ? [] : history
        return matched
    }

    // MARK: - Gesture edges to actions

    private func gestureBegan(_ index: Int, at time: Double) {
        guard states[index].start == nil else { return }
        states[index].start = time
        states[index].fired = false
        states[index].blocked = beforeSafeStart(time)
        if map.mappings[index].minHold <= 0 { fire(index, at: time, instant: false) }
    }

    private func gestureEnded(_ index: Int) {
        let mapping = map.mappings[index]
        if mapping.mode == .hold, states[index].down, case let key? = mapping.action.key {
            states[index].down = false
            keyUp(key)
        }
        states[index].start = nil
        states[index].fired = false
        states[index].blocked = false
        states[index].nextRepeat = nil
        states[index].endsWithEvent = nil
    }

    private func gestureInstant(_ index: Int, at time: Double, duration: Double) {
        guard states[index].start == nil, !beforeSafeStart(time) else { return }
        guard duration + 1e-9 >= map.mappings[index].minHold else { return }
        fire(index, at: time, instant: true)
    }

    private func beforeSafeStart(_ time: Double) -> Bool {
        guard let faceSince else { return true }
        return time < faceSince + map.safeStart - 1e-9
    }

    /// Fires a mapping's action unless the gesture is blocked, the map is paused, or the cooldown runs.
    private func fire(_ index: Int, at time: Double, instant: Bool) {
        let mapping = map.mappings[index]
        var state = states[index]
        if state.blocked { return }
        let pausedOut = isPaused && mapping.action != .pause
        let coolingDown = state.lastFire.map { time - $0 < mapping.cooldown - 1e-9 } ?? false
        if pausedOut || coolingDown {
            state.blocked = !instant
            states[index] = state
            return
        }
        state.fired = !instant
        state.lastFire = time
        states[index] = state

        switch mapping.action {
        case .command(let argv):
            injector.run(argv)
        case .pause:
            togglePause()
        case .key(let key), .button(let key):
            switch mapping.mode {
            case .press:
                tap(key)
            case .hold:
                if instant {
                    tap(key)
                } else {
                    states[index].down = true
                    keyDown(key)
                }
            case .toggle:
                if states[index].down {
                    states[index].down = false
                    keyUp(key)
                } else {
                    states[index].down = true
                    keyDown(key)
                }
            case .repeat(let interval):
                tap(key)
                if !instant { states[index].nextRepeat = time + interval }
            }
        }
    }

    /// Most `repeat` taps one step makes (a tick is 0.02 s; the shortest interval 0.01 s makes two).
    static let maximumCatchUpTaps = 4

    /// Fires what falls due between the last time and `time`: `minHold` gestures, then `repeat` taps.
    private func advance(to time: Double) {
        defer { now = max(now ?? time, time) }
        for index in states.indices {
            let mapping = map.mappings[index]
            if let start = states[index].start, !states[index].fired, !states[index].blocked, mapping.minHold > 0,
                time + 1e-9 >= start + mapping.minHold
            {
                fire(index, at: start + mapping.minHold, instant: false)
            }
            if case .repeat(let interval) = mapping.mode, case let key? = mapping.action.key {
                // Taps due since the last step, at most `maximumCatchUpTaps`: after a gap (a late line, a
                // suspended client) the missed ones are dropped, not typed in a burst.
                var taps = 0
                while let next = states[index].nextRepeat, next <= time + 1e-9 {
                    tap(key)
                    taps += 1
                    states[index].nextRepeat = taps < Self.maximumCatchUpTaps ? next + interval : time + interval
                }
            }
        }
    }

    private func togglePause() {
        isPaused.toggle()
        guard isPaused else { return }
        for index in states.indices where map.mappings[index].action != .pause {
            if states[index].down, case let key? = map.mappings[index].action.key { keyUp(key) }
            states[index].down = false
            states[index].nextRepeat = nil
            if states[index].start != nil { states[index].blocked = true }
        }
    }

    /// Fires the mappings of `faceFound` or `faceLost` itself (a lock-screen command on `faceLost`): a moment,
    /// like a one-shot event, but not held back by safe start, which measures the face's presence from
    /// these very events. They were accepted by the map and never fired.
    private func faceMoment(_ name: String, at time: Double) {
        for index in states.indices where map.mappings[index].trigger == .event(name) {
            fire(index, at: time, instant: true)
        }
    }

    private func faceLost(at time: Double) {
        for index in states.indices {
            if states[index].start != nil { gestureEnded(index) }
            if states[index].down, case let key? = map.mappings[index].action.key { keyUp(key) }
            states[index].down = false
            states[index].history = []
        }
        active = [:]
        faceSince = nil
    }

    // MARK: - Keys, counted across mappings

    private func keyDown(_ key: InputKey) {
        let count = downCount[key, default: 0]
        if count == 0 { injector.press(key) }
        downCount[key] = count + 1
    }

    private func keyUp(_ key: InputKey) {
        guard let count = downCount[key] else { return }
        if count == 1 {
            downCount[key] = nil
            injector.release(key)
        } else {
            downCount[key] = count - 1
        }
    }

    /// Down and up, unless another mapping holds the key down (then nothing: a tap would let it up).
    private func tap(_ key: InputKey) {
        guard downCount[key] == nil else { return }
        injector.press(key)
        injector.release(key)
    }
}

extension Action {
    /// The key or button of a key/button action.
    var key: InputKey? {
        switch self {
        case .key(let key), .button(let key): key
        case .command, .pause: nil
        }
    }
}
