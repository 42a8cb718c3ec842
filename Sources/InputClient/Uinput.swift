import CEvdev
import Foundation
import WinkCore

/// What a virtual input device can send: its name, its `EV_KEY` codes and its `EV_REL` axes.
public struct VirtualDeviceSpec: Equatable, Sendable {
    /// The device name the compositor and `libinput list-devices` show.
    public var name: String
    /// The keys and buttons, sorted by code.
    public var keys: [InputKey]
    /// `EV_REL` codes (`REL_X`, `REL_Y`).
    public var relativeAxes: [UInt16]

    /// A spec as given; `keys` should be sorted by code.
    public init(name: String, keys: [InputKey], relativeAxes: [UInt16]) {
        self.name = name
        self.keys = keys
        self.relativeAxes = relativeAxes
    }

    /// The device for a map: its keys plus `BTN_LEFT/RIGHT/MIDDLE` and `REL_X/REL_Y`, so that udev and
    /// libinput class it as a keyboard and a mouse.
    public static func forMap(_ map: InputMap, name: String = "winkd face input") -> VirtualDeviceSpec {
        let keys = Set(map.keys + InputKey.mouseButtons).sorted { $0.code < $1.code }
        return VirtualDeviceSpec(name: name, keys: keys, relativeAxes: [LinuxInputCode.relX, LinuxInputCode.relY])
    }
}

/// A created virtual input device (the substitutable layer under `UinputInjector`).
public protocol UinputDevice: AnyObject {
    /// Writes one input event; `type`/`code` from `linux/input-event-codes.h`.
    /// - Throws: `InputError.uinputUnavailable` when the kernel refuses the write.
    func write(type: UInt16, code: UInt16, value: Int32) throws
    /// Removes the device from the system; the kernel lets up any key still down. Idempotent.
    func destroy()
}

/// Makes virtual input devices: `LibevdevUinput` on `/dev/uinput`, or a fake in tests.
public protocol UinputDeviceFactory {
    /// - Throws: `InputError.uinputUnavailable` (exit 69) naming the device node and what is wrong.
    func makeDevice(_ spec: VirtualDeviceSpec) throws -> UinputDevice
}

/// Virtual devices through libevdev's uinput helpers (`libevdev_uinput_create_from_device(3)`).
public struct LibevdevUinput: UinputDeviceFactory {
    /// The uinput node, `/dev/uinput` unless a test says otherwise.
    public var path: String

    /// A factory for the uinput node at `path`.
    public init(path: String = "/dev/uinput") { self.path = path }

    /// Creates the device with `cev_uinput_create` (bus `BUS_VIRTUAL`).
    /// - Throws: `InputError.uinputUnavailable` (exit 69) naming `path` and why: opening it failed, or
    ///   libevdev could not create the device on it.
    public func makeDevice(_ spec: VirtualDeviceSpec) throws -> UinputDevice {
        let keys = spec.keys.map { UInt32($0.code) }
        let rels = spec.relativeAxes.map { UInt32($0) }
        var error: Int32 = 0
        var stage: Int32 = 0
        let handle = keys.withUnsafeBufferPointer { k in
            rels.withUnsafeBufferPointer { r in
                cev_uinput_create(
                    path, spec.name, k.baseAddress, Int32(k.count), r.baseAddress, Int32(r.count),
                    &error, &stage)
            }
        }
        guard let handle else { throw Self.error(path: path, errno: error, opening: stage == 1) }
        return LibevdevUinputDevice(handle: handle, path: path)
    }

    /// The message for a failed open (stage 1) or device creation (stage 2).
    static func error(path: String, errno code: Int32, opening: Bool) -> InputError {
        let reason: String
        switch (opening, code) {
        case (true, ENOENT), (true, ENODEV), (true, ENXIO):
            reason = "missing (load the uinput module: modprobe uinput)"
        case (true, EACCES), (true, EPERM), (true, EROFS):
            reason =
                "not writable (add a udev rule KERNEL==\"uinput\", GROUP=\"input\", MODE=\"0660\" "
                + "or TAG+=\"uaccess\", or run as a member of group input)"
        case (true, _):
            reason = "cannot open: \(Errno(code: code))"
        default:
            reason = "cannot create a virtual input device: \(Errno(code: code))"
        }
        return InputError(.uinputUnavailable, subject: path, reason: reason)
    }
}

/// A device created by `LibevdevUinput`; destroyed on `destroy()` or deinit. Not thread-safe.
final class LibevdevUinputDevice: UinputDevice {
    private var handle: OpaquePointer?
    private let path: String

    init(handle: OpaquePointer, path: String) {
        self.handle = handle
        self.path = path
    }

    func write(type: UInt16, code: UInt16, value: Int32) throws {
        guard let handle else {
            throw InputError(.uinputUnavailable, subject: path, reason: "device already destroyed")
        }
        let rc = cev_uinput_write(handle, UInt32(type), UInt32(code), value)
        guard rc == 0 else {
            throw InputError(.uinputUnavailable, subject: path, reason: "write failed: \(Errno(code: rc))")
        }
    }

    func destroy() {
        cev_uinput_destroy(handle)
        handle = nil
    }

    deinit { destroy() }
}

/// Injects through a virtual uinput device created at start: each press or release is one `EV_KEY`
/// event followed by `EV_SYN`/`SYN_REPORT`. Commands start through `CommandSpawner`.
/// Works under X11, Wayland and the Linux console alike, since the kernel sees a real input device.
public final class UinputInjector: Injector {
    /// Nil for a map without a key or button (commands and pause only), which needs no device.
    private let device: UinputDevice?
    private let spawner: CommandSpawner
    private let log: (String) -> Void

    /// Creates the device for the map, if it presses any key or button: a map of commands alone runs
    /// without `/dev/uinput` (it exited 69 for want of a device it would never use).
    /// - Parameter log: receives one line for each write or spawn that failed (the engine goes on).
    /// - Throws: `InputError.uinputUnavailable` (exit 69) when the device cannot be created.
    public init(
        map: InputMap, factory: UinputDeviceFactory, spawner: CommandSpawner = CommandSpawner(),
        log: @escaping (String) -> Void
    ) throws {
        device = map.keys.isEmpty ? nil : try factory.makeDevice(VirtualDeviceSpec.forMap(map))
        self.spawner = spawner
        self.log = log
    }

    /// Writes the key down and a `SYN_REPORT`; a failed write is logged, not thrown.
    public func press(_ key: InputKey) { send(key, value: 1) }
    /// Writes the key up and a `SYN_REPORT`; a failed write is logged, not thrown.
    public func release(_ key: InputKey) { send(key, value: 0) }

    /// Spawns `command` (non-empty) with `CommandSpawner`; a failure to start is logged, not thrown.
    public func run(_ command: [String]) {
        do {
            try spawner.spawn(command)
        } catch {
            log("\(command[0]): cannot start: \(error)")  // "ENOENT: No such file or directory"
        }
    }

    /// Removes the virtual device. Idempotent.
    public func close() { device?.destroy() }

    private func send(_ key: InputKey, value: Int32) {
        do {
            guard let device else { return }  // no key in the map: never called
            try device.write(type: LinuxInputCode.evKey, code: key.code, value: value)
            try device.write(type: LinuxInputCode.evSyn, code: LinuxInputCode.synReport, value: 0)
        } catch {
            log("\(error)")
        }
    }

    deinit { device?.destroy() }
}
