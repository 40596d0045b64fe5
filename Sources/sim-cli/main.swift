import Foundation
import Scenarios
import SimCLI
import SimSyncEngine

// Everything lives in SimCLI; this file only connects it to the process. It registers the
// example apps of SimSyncEngine (the reference notes app and its planted bugs), so that
// `--app NotesApp` works; a tool of your own registers your apps the same way.
exit(SimCLI.runAsProcess(arguments: Array(CommandLine.arguments.dropFirst()), apps: exampleApps.map { AppUnderTest($0) }).rawValue)
