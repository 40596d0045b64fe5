import Foundation
import Scenarios

/// Turns a trap — a failed precondition, an index out of range, any crash of sim-cli itself —
/// into one line asking to report it with the command that caused it, and exit 70.
///
/// The message is prepared before any work starts; the signal handler only writes it with
/// `write(2)` and leaves with `_exit(2)`, both safe in a signal handler.
enum CrashReport {
  nonisolated(unsafe) static var message: UnsafeMutablePointer<CChar>?
  nonisolated(unsafe) static var length = 0

  static func install(arguments: [String], toolName: String) {
    let command = ([toolName] + arguments.map(shellWord)).joined(separator: " ")
    let text = "\nsim-cli: internal error (exit 70). \(InternalErrorReport.request)\n  \(Console.sanitized(command))\n"
    let bytes = Array(text.utf8CString)
    let buffer = UnsafeMutablePointer<CChar>.allocate(capacity: bytes.count)
    buffer.initialize(from: bytes, count: bytes.count)
    message = buffer
    length = bytes.count - 1
    CrashContext.slots = 0  // (initialized here, not first in the signal handler)
    for sig in [SIGILL, SIGTRAP, SIGABRT, SIGSEGV, SIGBUS, SIGFPE] {
      signal(sig) { _ in
        if let m = CrashReport.message { _ = write(STDERR_FILENO, m, CrashReport.length) }
        CrashContext.writeForCrash()
        _exit(70)
      }
    }
    // A reader that went away (`sim-cli list | head -1`) is a failed write to stdout, not a
    // signal: the command finishes what it writes to files, says so, and exits 74.
    signal(SIGPIPE, SIG_IGN)
    // A file-size limit reached is a failed write (EFBIG), handled like a full disk.
    signal(SIGXFSZ, SIG_IGN)
  }

  /// A word as a shell reads it back.
  static func shellWord(_ s: String) -> String {
    let safe =
      !s.isEmpty && s.unicodeScalars.allSatisfy { ($0.isASCII && ($0.properties.isAlphabetic || "0123456789-_./=:,@%+".unicodeScalars.contains($0))) }
    return safe ? s : "'" + s.replacingOccurrences(of: "'", with: "'\\''") + "'"
  }
}

/// What each worker of a long command is running, for the crash report: a trap in one run ends
/// the whole process, and the report then names the run that was going on (`selftest
/// --type-orders`: the schema's order, the app, the seed, and the command that runs it alone).
///
/// The buffers are allocated before the work starts (``reserve(workers:)``); each worker
/// overwrites only its own slot; the signal handler only reads them, with `write(2)`, and marks
/// the slot of the thread that crashed. (Another worker may be rewriting its slot meanwhile: its
/// line may then be cut.)
enum CrashContext {
  static let slotBytes = 1_024
  nonisolated(unsafe) static var slots = 0
  nonisolated(unsafe) static var text: UnsafeMutablePointer<CChar>?
  nonisolated(unsafe) static var lengths: UnsafeMutablePointer<Int>?
  nonisolated(unsafe) static var threads: UnsafeMutablePointer<pthread_t?>?
  nonisolated(unsafe) static var heading: UnsafeMutablePointer<CChar>?
  nonisolated(unsafe) static var headingLength = 0

  /// Room for `workers` workers, each to say what it runs; `heading` is printed before them.
  static func reserve(workers: Int, heading title: String) {
    clear()
    let bytes = Array(title.utf8CString)
    let h = UnsafeMutablePointer<CChar>.allocate(capacity: bytes.count)
    h.initialize(from: bytes, count: bytes.count)
    let t = UnsafeMutablePointer<CChar>.allocate(capacity: workers * slotBytes)
    t.initialize(repeating: 0, count: workers * slotBytes)
    let l = UnsafeMutablePointer<Int>.allocate(capacity: workers)
    l.initialize(repeating: 0, count: workers)
    let th = UnsafeMutablePointer<pthread_t?>.allocate(capacity: workers)
    th.initialize(repeating: nil, count: workers)
    // (Buffers of an earlier reservation are left allocated: a handler may be reading them.)
    (heading, headingLength, text, lengths, threads) = (h, bytes.count - 1, t, l, th)
    slots = workers
  }

  /// Worker `worker` now runs what `line` says (one line, cut to the slot's size).
  static func set(worker: Int, _ line: String) {
    guard worker < slots, let text, let lengths, let threads else { return }
    lengths[worker] = 0
    threads[worker] = pthread_self()
    var n = 0
    for byte in line.utf8 where n < slotBytes - 1 {
      text[worker * slotBytes + n] = CChar(bitPattern: byte)
      n += 1
    }
    lengths[worker] = n
  }

  /// Nothing is running any more: the report names nothing.
  static func clear() {
    slots = 0
  }

  /// Writes the heading and every worker's line, the crashing thread's marked (signal-safe: no
  /// allocation, only `write(2)`).
  static func writeForCrash() {
    guard slots > 0, let text, let lengths, let threads, let heading else { return }
    _ = write(STDERR_FILENO, heading, headingLength)
    let me = pthread_self()
    for worker in 0..<slots where lengths[worker] > 0 {
      let mine = threads[worker].map { pthread_equal($0, me) != 0 } ?? false
      let mark: StaticString = mine ? "  ✗ " : "    "
      _ = write(STDERR_FILENO, mark.utf8Start, mark.utf8CodeUnitCount)
      _ = write(STDERR_FILENO, text + worker * slotBytes, lengths[worker])
      let end: StaticString = mine ? "   (this run crashed)\n" : "   (also running)\n"
      _ = write(STDERR_FILENO, end.utf8Start, end.utf8CodeUnitCount)
    }
  }
}

extension SimCLI {
  /// The whole tool as a process runs it: a crash report for traps, the standard console, and
  /// exit 74 when results could not be written to stdout.
  ///
  /// `apps` are the user's apps that `--app NAME` can run (`run`, `fuzz`, `shrink`, `explain`):
  /// a tool of one's own is this call with one's apps.
  ///
  ///     exit(SimCLI.runAsProcess(arguments: Array(CommandLine.arguments.dropFirst()), apps: [AppUnderTest(MyApp.self)]).rawValue)
  public static func runAsProcess(arguments: [String], apps: [AppUnderTest] = []) -> ExitCode {
    // The name the user typed (`sim-cli`, or their own tool's), for the commands it suggests.
    let toolName = CommandLine.arguments.first.map { URL(fileURLWithPath: $0).lastPathComponent }.flatMap { $0.isEmpty ? nil : $0 } ?? "sim-cli"
    CrashReport.install(arguments: arguments, toolName: toolName)
    // A standard descriptor closed by the caller (`>&-`) would be the next file opened — the
    // `--out` file would get the report. Each closed one is given /dev/null; a closed standard
    // output is still a failed output: the command runs, its files are complete, and it says
    // so and exits 74.
    let stdoutClosed = reserveClosedStandardDescriptors()
    let console = Console.standard()
    if ProcessInfo.processInfo.environment["SIM_CLI_TEST_TRAP"] == "1" {
      // A hidden hook for the test of the crash report.
      let empty: [Int] = []
      _ = empty[Int(arguments.count) + 1]
    }
    if let (index, shown) = argumentNotUTF8() {
      // A path with bytes that are not UTF-8 would be read as another name (each such byte
      // becomes U+FFFD): `--out` would write another file, `run` would not find the one named.
      console.err(
        "Error: argument \(index) ('\(shown)') is not UTF-8 text; \(toolName) reads names and values as UTF-8, and would open another file than the one named. Rename the file (or link to it under a UTF-8 name).\n"
      )
      return .usage
    }
    let code = main(arguments: arguments, console: console, apps: apps, toolName: toolName)
    if stdoutClosed {
      console.err("Error: standard output was closed, so nothing this command printed was kept; the files it wrote are complete.\n")
      return .ioError
    }
    if let reason = console.stdoutFailure {
      console.err("Error: cannot write to standard output: \(reason).\n")
      return .ioError
    }
    return code
  }

  /// The first of the process's arguments (counted from 1 after the tool's name) whose bytes are
  /// not UTF-8, as shown with U+FFFD.
  static func argumentNotUTF8() -> (Int, String)? {
    for index in 1..<Int(CommandLine.argc) {
      guard let pointer = CommandLine.unsafeArgv[index] else { continue }
      let bytes = UnsafeBufferPointer(start: pointer, count: strlen(pointer)).map { UInt8(bitPattern: $0) }
      if String(validating: bytes, as: UTF8.self) == nil { return (index, String(decoding: bytes, as: UTF8.self)) }
    }
    return nil
  }

  /// Opens /dev/null on each of descriptors 0, 1 and 2 that is closed; whether 1 was.
  static func reserveClosedStandardDescriptors() -> Bool {
    var stdoutClosed = false
    for fd: Int32 in [0, 1, 2] where fcntl(fd, F_GETFD) == -1 && errno == EBADF {
      if fd == 1 { stdoutClosed = true }
      let null = open("/dev/null", fd == 0 ? O_RDONLY : O_WRONLY)
      if null >= 0, null != fd {
        _ = dup2(null, fd)
        close(null)
      }
    }
    return stdoutClosed
  }
}
