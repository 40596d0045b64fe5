import Foundation
import SimCLI

// Everything lives in SimCLI; this file only connects it to the process.
let code = SimCLI.main(arguments: Array(CommandLine.arguments.dropFirst()), console: .standard())
exit(code.rawValue)
