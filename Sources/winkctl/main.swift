import WinkDaemon
WinkctlMain.run()
