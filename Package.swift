// swift-tools-version:6.0
import PackageDescription

// Layers, bottom-up: C shims -> Platform/Secrets/Storage/LineProtocol -> TLS -> Runtime -> RPC/HTTP
// -> ServiceKit (the service host) -> Delivery -> one library per service -> one executable, `latchkey`,
// which is the tool and, by its first argument or the name it is invoked by, each of the five services.
// The wire contract is in protocol/.
let strict: [SwiftSetting] = [.swiftLanguageMode(.v6)]

let package = Package(
    name: "Latchkey",
    // The server is Linux-only (Glibc); these floors are the client's: an iOS 15 / macOS 12 app
    // adds the package for the LatchkeyClient product alone and never builds the server's C libraries.
    platforms: [.macOS(.v12), .iOS(.v15)],
    products: [
        .executable(name: "latchkey", targets: ["LatchkeyMain"]),
        // What an iOS app adds: Foundation only (FoundationNetworking on Linux), no C libraries.
        .library(name: "LatchkeyClient", targets: ["LatchkeyClient"]),
    ],
    targets: [
        // System libraries and tiny C shims for what Swift cannot import directly.
        .target(name: "CLinux"),
        .target(name: "COpenSSL", linkerSettings: [.linkedLibrary("ssl"), .linkedLibrary("crypto")]),
        .target(name: "CSQLite", linkerSettings: [.linkedLibrary("sqlite3")]),
        // libpq's header only (libpq-dev); the library is dlopen'ed in PostgreSQL mode, not linked.
        .systemLibrary(name: "CPostgres", providers: [.apt(["libpq-dev"])]),

        // The platform, then pure and leaf libraries.
        // The one module that touches the C library directly (re-exported): system calls, sockets,
        // addresses, clocks, threads, descriptor limits; where Linux and Darwin differ, it branches.
        .target(name: "Platform", dependencies: ["CLinux"], swiftSettings: strict),
        .target(name: "LineProtocol", swiftSettings: strict),
        // Every method, declared once: access, rate group, retry, params, result, errors. The routers,
        // the gateway's policy, protocol/methods.json and protocol/openapi.json all follow from it.
        .target(name: "Contract", dependencies: ["LineProtocol"], swiftSettings: strict),
        .target(name: "Secrets", dependencies: ["COpenSSL", "Platform"], swiftSettings: strict),
        .target(name: "Storage", dependencies: ["Platform", "CSQLite", "CPostgres"], swiftSettings: strict),
        // WebAuthn relying-party checks: CBOR, COSE keys, authenticator data, none/packed/apple
        // attestation, assertions; and a software authenticator for benches and tests.
        .target(name: "WebAuthn", dependencies: ["Secrets", "LineProtocol"], swiftSettings: strict),
        // One TLS layer (OpenSSL) for the gateway's doors and every client: contexts, sessions, peer verification.
        .target(name: "TLS", dependencies: ["Platform", "COpenSSL", "Secrets"], swiftSettings: strict),

        // The non-blocking runtime: event loops over an epoll or poll backend, channels (plain or
        // TLS), accepting listeners, the worker pool, logging and metrics.
        .target(name: "Runtime", dependencies: ["Platform", "CLinux", "LineProtocol", "TLS"], swiftSettings: strict),
        // JSON-RPC over the line protocol: the server and its connections, the method router and
        // typed params, the non-blocking client between services, and a blocking client for tools.
        .target(name: "RPC", dependencies: ["Contract", "Runtime", "Platform", "LineProtocol", "Secrets", "TLS"], swiftSettings: strict),
        // HTTP/1.1: the server (parser, pipelined connections) and the blocking client the
        // delivery providers use, both over the one TLS layer.
        .target(name: "HTTP", dependencies: ["Runtime", "Platform", "TLS"], swiftSettings: strict),
        // What every service process shares: options and configuration, the lifecycle that drains
        // on SIGTERM, its database, storage errors as the wire sees them, and identity's sessions.
        .target(name: "ServiceKit", dependencies: ["Contract", "RPC", "Runtime", "Platform", "LineProtocol", "Secrets", "Storage"], swiftSettings: strict),
        // Message delivery shared by verification and reset: outbox, SMTP, webhook, SMS providers.
        .target(name: "Delivery", dependencies: ["ServiceKit", "HTTP", "RPC", "Runtime", "Platform", "Secrets", "TLS"], swiftSettings: strict),

        // Service logic, testable in-process.
        .target(name: "Identity", dependencies: ["Contract", "ServiceKit", "RPC", "Runtime", "Platform", "Storage", "Secrets", "Delivery", "WebAuthn"], swiftSettings: strict),
        .target(name: "Verification", dependencies: ["Contract", "ServiceKit", "RPC", "Runtime", "Platform", "Storage", "Secrets", "Delivery"], swiftSettings: strict),
        .target(name: "Accounts", dependencies: ["Contract", "ServiceKit", "RPC", "Runtime", "Platform", "Storage", "Secrets"], swiftSettings: strict),
        .target(name: "Reset", dependencies: ["Contract", "ServiceKit", "RPC", "Runtime", "Platform", "Storage", "Secrets", "Delivery"], swiftSettings: strict),
        .target(name: "Gateway", dependencies: ["Contract", "ServiceKit", "RPC", "HTTP", "Runtime", "Platform", "Secrets", "TLS"], swiftSettings: strict),

        // The Swift client an app uses: the HTTP door through URLSession, typed calls, the seed flows.
        .target(name: "LatchkeyClient", exclude: ["README.md"], swiftSettings: strict),

        // The whole stack as child processes, for `latchkey up`, the benches and end-to-end tests.
        .target(name: "StackLauncher", dependencies: ["RPC", "Runtime", "Platform", "LineProtocol", "CLinux"], swiftSettings: strict),

        .executableTarget(
            name: "LatchkeyMain",
            dependencies: [
                "StackLauncher", "ServiceKit", "RPC", "Runtime", "Platform", "Secrets", "Storage", "Delivery", "Identity", "Verification", "Accounts", "Reset", "Gateway",
                "WebAuthn",
            ],
            path: "Sources/Executables/latchkey", swiftSettings: strict),
        // A consumer of the client's public surface only (no @testable): signs in the demo user, prints balances.
        .executableTarget(name: "SignInDemo", dependencies: ["LatchkeyClient"], path: "Examples/SignInDemo", swiftSettings: strict),

        // Shared by the test targets: thread-safe boxes, lists and counters, a manual clock, waits on
        // a condition with a deadline, loopback sockets, raw HTTP and line clients, curl, the openssl command line.
        .target(name: "TestSupport", dependencies: ["Platform", "LineProtocol"], path: "Tests/TestSupport", swiftSettings: strict),
        // Event loops on threads of their own and in-process line-protocol servers (a router on port 0).
        .target(name: "ServerTestSupport", dependencies: ["TestSupport", "RPC", "HTTP", "Runtime", "Platform", "LineProtocol"], path: "Tests/ServerTestSupport", swiftSettings: strict),
        // A delivery provider that records what it was given, for the services that send messages.
        .target(name: "DeliveryTestSupport", dependencies: ["Delivery"], path: "Tests/DeliveryTestSupport", swiftSettings: strict),
        // Certificates made with the openssl command line, a blocking TLS test server, a client socket.
        .target(name: "TLSTestSupport", dependencies: ["TLS"], path: "Tests/TLSTestSupport", swiftSettings: strict),
        // Apple's App Attest in the test's hands: a CA in Apple's structure made with openssl, attestations and assertions.
        .target(name: "AppAttestTestSupport", dependencies: ["WebAuthn", "Secrets"], path: "Tests/AppAttestTestSupport", swiftSettings: strict),
        // Records SQLite's plan of every statement a store runs (hot paths read by index, not by scan).
        .target(name: "StoreTestSupport", dependencies: ["Storage"], path: "Tests/StoreTestSupport", swiftSettings: strict),

        // One test target per library target, each depending only on that library, what lies below it, and test support.
        .testTarget(name: "ContractTests", dependencies: ["Contract", "LineProtocol", "TestSupport"], swiftSettings: strict),
        .testTarget(name: "LineProtocolTests", dependencies: ["LineProtocol", "TestSupport"], swiftSettings: strict),
        .testTarget(name: "SecretsTests", dependencies: ["Secrets", "TestSupport"], swiftSettings: strict),
        .testTarget(name: "WebAuthnTests", dependencies: ["WebAuthn", "Secrets", "TestSupport"], swiftSettings: strict),
        .testTarget(name: "StorageTests", dependencies: ["Storage", "TestSupport"], swiftSettings: strict),
        .testTarget(name: "TLSTests", dependencies: ["TLS", "TLSTestSupport", "COpenSSL"], swiftSettings: strict),
        .testTarget(name: "RuntimeTests", dependencies: ["Runtime", "Platform", "TestSupport", "ServerTestSupport"], swiftSettings: strict),
        .testTarget(name: "RPCTests", dependencies: ["Contract", "RPC", "Runtime", "Platform", "LineProtocol", "TestSupport", "ServerTestSupport"], swiftSettings: strict),
        .testTarget(name: "HTTPTests", dependencies: ["HTTP", "Runtime", "Platform", "LineProtocol", "TestSupport", "ServerTestSupport"], swiftSettings: strict),
        .testTarget(name: "ServiceKitTests", dependencies: ["ServiceKit", "Platform", "Runtime"], swiftSettings: strict),
        .testTarget(name: "DeliveryTests", dependencies: ["Delivery", "HTTP", "Runtime", "Platform", "ServiceKit", "TLS", "TLSTestSupport", "TestSupport"], swiftSettings: strict),
        .testTarget(name: "IdentityTests", dependencies: ["Identity", "StoreTestSupport", "TestSupport", "WebAuthn", "AppAttestTestSupport"], swiftSettings: strict),
        .testTarget(name: "VerificationTests", dependencies: ["Verification", "StoreTestSupport", "TestSupport", "ServerTestSupport", "DeliveryTestSupport"], swiftSettings: strict),
        .testTarget(name: "AccountsTests", dependencies: ["Accounts", "StoreTestSupport", "TestSupport"], swiftSettings: strict),
        .testTarget(name: "ResetTests", dependencies: ["Reset", "StoreTestSupport", "TestSupport", "ServerTestSupport", "DeliveryTestSupport"], swiftSettings: strict),
        .testTarget(
            name: "GatewayTests",
            dependencies: ["Contract", "Gateway", "HTTP", "RPC", "Runtime", "Platform", "ServiceKit", "TLS", "TLSTestSupport", "TestSupport", "ServerTestSupport"],
            swiftSettings: strict),
        // Launches the real executables on ephemeral ports; talks to them over TCP.
        .testTarget(
            name: "EndToEndTests",
            dependencies: [
                "Contract", "StackLauncher", "ServiceKit", "RPC", "Runtime", "Platform", "Secrets", "LineProtocol", "Storage", "TestSupport", "ServerTestSupport",
                "TLSTestSupport", "WebAuthn", "AppAttestTestSupport",
            ],
            swiftSettings: strict),
        // The client against the real stack over its HTTP door; Secrets' P-256 stands in for the Secure Enclave.
        .testTarget(name: "LatchkeyClientTests", dependencies: ["LatchkeyClient", "StackLauncher", "RPC", "Platform", "Secrets", "LineProtocol", "TestSupport", "WebAuthn", "AppAttestTestSupport"], swiftSettings: strict),
    ]
)
