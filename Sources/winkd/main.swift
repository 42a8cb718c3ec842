import WinkDaemon

// Under systemd (Type=notify), report readiness, status, watchdog and stopping; elsewhere nothing.
WinkdMain.run(observer: SystemdObserver())
