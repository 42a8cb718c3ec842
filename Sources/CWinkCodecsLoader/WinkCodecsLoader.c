// See include/WinkCodecs.h. dlopen(3) with RTLD_LOCAL: the plugin's OpenCV codec libraries stay out of the
// global namespace; the table is the only way in.
#include "WinkCodecs.h"

#include <dlfcn.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define PLUGIN_NAME "libWinkCodecs.so"

void wink_one_line(char *message, size_t message_len, const char *text) {
    if (message == NULL || message_len == 0) return;
    snprintf(message, message_len, "%s", text ? text : "");
    size_t n = strlen(message);
    for (size_t i = 0; i < n; i++) {
        if (message[i] == '\n' || message[i] == '\r' || message[i] == '\t') message[i] = ' ';
    }
    while (n > 0 && message[n - 1] == ' ') message[--n] = '\0';
}

static pthread_once_t once = PTHREAD_ONCE_INIT;
static const wink_codecs_api *loaded;
static char failure[1024];

/// Tries one candidate path; on failure appends what went wrong to `failure`.
static const wink_codecs_api *try_path(const char *path) {
    char why[512];
    if (access(path, F_OK) != 0) {
        snprintf(why, sizeof why, "%s missing", path);
    } else {
        void *handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
        if (!handle) {
            const char *error = dlerror();  // names the path itself
            snprintf(why, sizeof why, "%s", error ? error : path);
        } else {
            const wink_codecs_api *(*entry)(void) =
                (const wink_codecs_api *(*)(void))dlsym(handle, "wink_codecs_api_v1");
            const wink_codecs_api *api = entry ? entry() : NULL;
            if (api && api->version == WINK_CODECS_API_VERSION) return api;
            snprintf(why, sizeof why, "%s: %s", path, entry ? "wrong plugin version" : "not a WinkCodecs plugin");
            dlclose(handle);
        }
    }
    size_t used = strlen(failure);
    snprintf(failure + used, sizeof failure - used, "%s%s", used ? "; " : "", why);
    return NULL;
}

static void load(void) {
    const char *explicit_path = getenv("WINK_CODECS_PLUGIN");
    if (explicit_path && *explicit_path) {
        loaded = try_path(explicit_path);
        return;
    }
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0) {
        snprintf(failure, sizeof failure, "cannot find the running executable to locate " PLUGIN_NAME);
        return;
    }
    exe[n] = 0;
    char *slash = strrchr(exe, '/');
    if (slash) *slash = 0;  // the executable's directory, e.g. /usr/local/bin
    char path[PATH_MAX + 64];
    snprintf(path, sizeof path, "%s/" PLUGIN_NAME, exe);
    if ((loaded = try_path(path))) return;
    slash = strrchr(exe, '/');
    if (slash) *slash = 0;  // its parent, e.g. /usr/local
    snprintf(path, sizeof path, "%s/lib/winkd/" PLUGIN_NAME, exe);
    loaded = try_path(path);
}

const wink_codecs_api *wink_codecs_load(char *message, size_t message_len) {
    pthread_once(&once, load);
    if (!loaded && message && message_len)
        snprintf(message, message_len, "OpenCV codec plugin not loaded: %s", failure);
    return loaded;
}
