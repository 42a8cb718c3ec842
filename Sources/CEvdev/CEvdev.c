#include "CEvdev.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>
#include <libevdev/libevdev.h>
#include <libevdev/libevdev-uinput.h>

struct cev_uinput {
    struct libevdev_uinput *uidev;
    int fd;
};

int cev_code_from_name(unsigned int type, const char *name) {
    if (name == NULL) return -1;
    return libevdev_event_code_from_name(type, name);
}

cev_uinput *cev_uinput_create(const char *uinput_path, const char *name,
                              const unsigned int *keys, int key_count,
                              const unsigned int *rels, int rel_count,
                              int *error, int *stage) {
    *error = 0;
    *stage = 0;
    int fd = open(uinput_path, O_RDWR | O_CLOEXEC);
    if (fd < 0) {
        *error = errno;
        *stage = 1;
        return NULL;
    }
    struct libevdev *dev = libevdev_new();
    if (dev == NULL) {
        close(fd);
        *error = ENOMEM;
        *stage = 2;
        return NULL;
    }
    libevdev_set_name(dev, name);
    libevdev_set_id_bustype(dev, BUS_VIRTUAL);
    libevdev_enable_event_type(dev, EV_KEY);
    for (int i = 0; i < key_count; i++) libevdev_enable_event_code(dev, EV_KEY, keys[i], NULL);
    if (rel_count > 0) libevdev_enable_event_type(dev, EV_REL);
    for (int i = 0; i < rel_count; i++) libevdev_enable_event_code(dev, EV_REL, rels[i], NULL);

    struct libevdev_uinput *uidev = NULL;
    int rc = libevdev_uinput_create_from_device(dev, fd, &uidev);
    libevdev_free(dev); // the uinput device keeps its own copy of the description
    if (rc != 0) {
        close(fd);
        *error = -rc;
        *stage = 2;
        return NULL;
    }
    cev_uinput *result = malloc(sizeof *result);
    if (result == NULL) {
        libevdev_uinput_destroy(uidev);
        close(fd);
        *error = ENOMEM;
        *stage = 2;
        return NULL;
    }
    result->uidev = uidev;
    result->fd = fd;
    return result;
}

int cev_uinput_write(cev_uinput *device, unsigned int type, unsigned int code, int value) {
    int rc = libevdev_uinput_write_event(device->uidev, type, code, value);
    return rc < 0 ? -rc : 0;
}

void cev_uinput_destroy(cev_uinput *device) {
    if (device == NULL) return;
    libevdev_uinput_destroy(device->uidev);
    close(device->fd);
    free(device);
}
