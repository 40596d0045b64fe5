import Foundation
import SimCLI

// Everything lives in SimCLI; this file only connects it to the process.
exit(SimCLI.runAsProcess(arguments: Array(CommandLine.arguments.dropFirst())).rawValue)
