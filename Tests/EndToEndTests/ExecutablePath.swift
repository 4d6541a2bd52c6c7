import Foundation
import StackLauncher

/// The links the image installs, made once per test process: each service's name linked to
/// `latchkey`, so a test starts a service exactly as compose does.
private let serviceLinks: String = {
    let directory = NSTemporaryDirectory() + "latchkey-links-\(getpid())"
    do {
        return try Stack.makeServiceLinks(binDirectory: Stack.siblingBinaryDirectory(), dataDirectory: directory)
    } catch {
        fatalError("cannot link the services to latchkey: \(error)")
    }
}()

/// The path a test runs `name` by: a service's link to `latchkey`, or a built executable
/// (`latchkey`, `SignInDemo`).
func executablePath(_ name: String) -> String {
    if Stack.startOrder.contains(name) { return (serviceLinks as NSString).appendingPathComponent(name) }
    return (Stack.siblingBinaryDirectory() as NSString).appendingPathComponent(name)
}
