// CEvdev: the few libevdev calls winkctl's input client needs (event-code names and a uinput device),
// behind plain C functions that show no libevdev type. Only the InputClient module imports this target.
// libevdev: https://www.freedesktop.org/software/libevdev/doc/latest/ (uinput: libevdev-uinput.h).
#ifndef CEVDEV_H
#define CEVDEV_H

#include <linux/input-event-codes.h>

/// The code of an event name of the given type (`EV_KEY` with "KEY_LEFT" or "BTN_LEFT"), from
/// libevdev_event_code_from_name(3). Returns the code (>= 0), or -1 when the name is unknown.
/// Thread-safe (pure table look-up).
int cev_code_from_name(unsigned int type, const char *name);

/// An opaque virtual input device on /dev/uinput.
typedef struct cev_uinput cev_uinput;

/// Opens `uinput_path` (normally "/dev/uinput") read-write and creates a virtual device named `name`
/// that can send the `key_count` EV_KEY codes in `keys` and the `rel_count` EV_REL codes in `rels`
/// (libevdev_uinput_create_from_device(3)). The device's bus is BUS_VIRTUAL.
/// On success returns the device and sets *error to 0. On failure returns NULL and sets *error to a
/// positive errno and *stage to 1 when opening the path failed (ENOENT, EACCES, ...) or 2 when
/// libevdev could not create the device on it (for example ENOTTY on a file that is not uinput).
/// Not thread-safe per device.
cev_uinput *cev_uinput_create(const char *uinput_path, const char *name,
                              const unsigned int *keys, int key_count,
                              const unsigned int *rels, int rel_count,
                              int *error, int *stage);

/// Writes one input event (type, code, value) to the device, as libevdev_uinput_write_event(3).
/// Returns 0 or a positive errno.
int cev_uinput_write(cev_uinput *device, unsigned int type, unsigned int code, int value);

/// Destroys the virtual device (the kernel releases any key still down) and closes its descriptor.
/// NULL is ignored.
void cev_uinput_destroy(cev_uinput *device);

#endif
