import WinkDaemon
WinkdMain.run()
