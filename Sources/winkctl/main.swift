import WinkctlCommands

WinkctlMain.run()
