/// `os.log`'s `Logger`, which Linux does not have: the same calls, logging nothing, so that the
/// port keeps its log lines as they are.
struct Logger: Sendable {
  init(subsystem: String, category: String) {}
  func log(_ message: @autoclosure () -> String) {}
  func trace(_ message: @autoclosure () -> String) {}
  func debug(_ message: @autoclosure () -> String) {}
  func info(_ message: @autoclosure () -> String) {}
  func notice(_ message: @autoclosure () -> String) {}
  func warning(_ message: @autoclosure () -> String) {}
  func error(_ message: @autoclosure () -> String) {}
  func critical(_ message: @autoclosure () -> String) {}
  func fault(_ message: @autoclosure () -> String) {}
}
