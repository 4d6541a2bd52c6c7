#!/usr/bin/env python3
"""Passkeys against another relying party: a software authenticator written here (Python's
`cryptography` for ES256 P-256 and RS256 2048-bit keys, `cbor2` for CBOR) builds registration
responses (attestation none, packed self, packed with an x5c certificate made here) and
assertions, each with one mutation, and sends every one both to Latchkey and to py_webauthn
(`verify_registration_response` / `verify_authentication_response`) with the same challenge,
origin, RP ID `localhost`, user verification as the server requires it for that ceremony
(register and verify: required; login: not), and for assertions the credential's public key
and the sign count the server holds. The two must agree on every case (accept or refuse).

The challenge of each case is a fresh one from Latchkey (identity's own port, so no gateway
rate limit applies); successful registrations use fresh credential ids and users hold at most
10 passkeys, so "already registered" and the per-user limit never mask a result.

Where the two relying parties differ by design (py_webauthn leaves a check to its caller, or
Latchkey applies a rule WebAuthn L3 names), the case is LISTED below with the section and what
Latchkey must answer; those are counted and reported apart. RP_CHOICE cases are ones the
specification leaves to the relying party: any answer passes, and Latchkey's is reported.
python-fido2's Fido2Server (with the same algorithms and formats, and the counter rule added)
is a third opinion: reported, never decisive.

A case fails as DISAGREE (the two differ, nothing listed), MISSED (Latchkey does not apply a
listed rule) or MISBEHAVED (the right verdict, but error.data without the contract's reason,
a sign-in not at aal 2 exactly when UV was set, or identity.passkeys not showing what was
registered). Two rules no single response shows are checked after the cases: one challenge in
two assertions sent at once is accepted once, and a user holds at most 10 passkeys.

Usage: passkey_oracle.py BIN_DIR   (the stack as run_passkeys.sh announces it, or started here)
Exits 0 when no case failed and the other checks passed, 1 otherwise.
"""
import base64
import copy
import hashlib
import json
import secrets
import struct
import sys
import threading
import traceback
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from typing import Callable, Optional

import cbor2
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, ed25519, padding, rsa
from cryptography.hazmat.primitives.asymmetric.utils import decode_dss_signature, encode_dss_signature
from cryptography.x509.oid import NameOID
from fido2.attestation import Attestation
from fido2.cose import CoseKey
from fido2.server import Fido2Server
from fido2.webauthn import Aaguid, AttestedCredentialData
from webauthn import verify_authentication_response, verify_registration_response
from webauthn.helpers.cose import COSEAlgorithmIdentifier

from passkey_stack import Account, Checks, Client, b64url, b64url_decode, reason, stack

RP_ID = "localhost"
RP_ID_HASH = hashlib.sha256(RP_ID.encode()).digest()
UP, RFU1, UV, BE, BS, RFU2, AT, ED = 0x01, 0x02, 0x04, 0x08, 0x10, 0x20, 0x40, 0x80
FLAG_NAMES = {UP: "UP", RFU1: "RFU1 (bit 1)", UV: "UV", BE: "BE", BS: "BS", RFU2: "RFU2 (bit 5)", AT: "AT", ED: "ED"}
AAGUID = bytes.fromhex("4c6b2d696e7465726f702d6f7261636c")  # "Lk-interop-oracl"
SERVER_ALGS = (-7, -257)
SERVER_FORMATS = ("none", "packed", "apple")
P256_ORDER = 0xFFFFFFFF00000000FFFFFFFFFFFFFFFFBCE6FAADA7179E84F3B9CAC2FC632551
OID_AAGUID = x509.ObjectIdentifier("1.3.6.1.4.1.45724.1.1.4")
DELETE = object()  # a client data member value that removes the member
CEREMONY_METHODS = {"register": "identity.passkey_register", "login": "identity.passkey_login", "verify": "identity.passkey_verify"}


def sha256(data):
    return hashlib.sha256(data).digest()


# MARK: the software authenticator's keys

class Key:
    """A credential (or attestation) key for one COSE algorithm: ES256, ES384, ES512, EdDSA, RS256."""

    CURVES = {-7: (ec.SECP256R1, 1, 32, hashes.SHA256), -35: (ec.SECP384R1, 2, 48, hashes.SHA384), -36: (ec.SECP521R1, 3, 66, hashes.SHA512)}

    def __init__(self, alg=-7, rsa_bits=2048, rsa_exponent=65537):
        self.alg = alg
        if alg in self.CURVES:
            self.private = ec.generate_private_key(self.CURVES[alg][0]())
        elif alg == -8:
            self.private = ed25519.Ed25519PrivateKey.generate()
        elif alg == -257:
            self.private = rsa.generate_private_key(public_exponent=rsa_exponent, key_size=rsa_bits)
        else:
            raise ValueError(f"no key for alg {alg}")

    def cose(self):
        public = self.private.public_key()
        if self.alg in self.CURVES:
            _, crv, size, _ = self.CURVES[self.alg]
            numbers = public.public_numbers()
            return {1: 2, 3: self.alg, -1: crv, -2: numbers.x.to_bytes(size, "big"), -3: numbers.y.to_bytes(size, "big")}
        if self.alg == -8:
            return {1: 1, 3: -8, -1: 6, -2: public.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)}
        numbers = public.public_numbers()
        return {1: 3, 3: -257, -1: numbers.n.to_bytes((numbers.n.bit_length() + 7) // 8, "big"),
                -2: numbers.e.to_bytes((numbers.e.bit_length() + 7) // 8, "big")}

    def sign(self, data):
        if self.alg in self.CURVES:
            return self.private.sign(data, ec.ECDSA(self.CURVES[self.alg][3]()))
        if self.alg == -8:
            return self.private.sign(data)
        return self.private.sign(data, padding.PKCS1v15(), hashes.SHA256())


def cbor(value):
    return cbor2.dumps(value, canonical=True)


# MARK: attestation certificates

class Attestor:
    """A root CA made here and the packed attestation leaves it signs (L3 §8.2.1): C, O,
    OU "Authenticator Attestation", CN, basicConstraints CA false, the AAGUID extension."""

    def __init__(self):
        self.root_key = ec.generate_private_key(ec.SECP256R1())
        name = x509.Name([x509.NameAttribute(NameOID.COUNTRY_NAME, "US"), x509.NameAttribute(NameOID.ORGANIZATION_NAME, "Latchkey Interop"),
                          x509.NameAttribute(NameOID.COMMON_NAME, "Latchkey Interop Attestation Root")])
        self.root_name = name
        self.root = self.certificate(name, self.root_key.public_key(), ca=True, extensions=())

    def certificate(self, subject, public_key, ca, extensions, critical_basic=True):
        now = datetime.now(timezone.utc)
        builder = (x509.CertificateBuilder().subject_name(subject).issuer_name(self.root_name).public_key(public_key)
                   .serial_number(x509.random_serial_number()).not_valid_before(now - timedelta(days=1)).not_valid_after(now + timedelta(days=365))
                   .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=critical_basic))
        for extension, critical in extensions:
            builder = builder.add_extension(extension, critical=critical)
        return builder.sign(self.root_key, hashes.SHA256())

    def leaf(self, aaguid, key_alg=-7, ou="Authenticator Attestation", country="US", ca=False, aaguid_ext="match", aaguid_critical=False):
        """(attestation Key, DER leaf). aaguid_ext: "match", "absent", or the 16 bytes to put there."""
        key = Key(key_alg)
        attributes = [x509.NameAttribute(NameOID.COUNTRY_NAME, country)] if country else []
        attributes += [x509.NameAttribute(NameOID.ORGANIZATION_NAME, "Latchkey Interop")]
        if ou:
            attributes.append(x509.NameAttribute(NameOID.ORGANIZATIONAL_UNIT_NAME, ou))
        attributes.append(x509.NameAttribute(NameOID.COMMON_NAME, "Latchkey Interop Authenticator"))
        extensions = []
        if aaguid_ext != "absent":
            value = aaguid if aaguid_ext == "match" else aaguid_ext
            extensions.append((x509.UnrecognizedExtension(OID_AAGUID, b"\x04\x10" + value), aaguid_critical))
        certificate = self.certificate(x509.Name(attributes), key.private.public_key(), ca=ca, extensions=extensions)
        return key, certificate.public_bytes(serialization.Encoding.DER)


# MARK: building responses

def compact_json(members):
    return json.dumps(members, separators=(",", ":")).encode()


@dataclass
class Registration:
    """Every part of one registration response: each field is a knob one mutation turns."""
    challenge: str
    origin: str
    key: Key
    fmt: str = "none"                      # none, packed (self), x5c (packed with a certificate), fido-u2f
    flags: int = UP | UV | AT
    sign_count: int = 0
    rp_id_hash: bytes = RP_ID_HASH
    aaguid: bytes = AAGUID
    credential_id: bytes = field(default_factory=lambda: secrets.token_bytes(32))
    credential_id_length: Optional[int] = None   # the length field; None: the id's own length
    cose: Optional[dict] = None                  # None: the key's own COSE_Key
    extensions: bytes = b""                      # CBOR after the key (what ED announces)
    auth_tail: bytes = b""                       # bytes after every part of authData
    client: dict = None                          # clientData members (set in __post_init__)
    client_bytes: Optional[bytes] = None         # replaces the serialized members
    statement_alg: Optional[int] = None          # None: the attestation key's own
    statement: object = None                     # replaces the whole attStmt
    statement_extra: dict = field(default_factory=dict)
    fmt_name: object = None                      # None: fmt's own (x5c is "packed")
    object_tail: bytes = b""                     # bytes after the attestation object's CBOR
    certificate: dict = field(default_factory=dict)   # Attestor.leaf options
    chain_root: bool = False                     # x5c: the root after the leaf
    json_id: Optional[str] = None                # replaces id (and rawId unless json_raw_id)
    json_raw_id: Optional[str] = None

    def __post_init__(self):
        self.client = {"type": "webauthn.create", "challenge": self.challenge, "origin": self.origin, "crossOrigin": False}


@dataclass
class Assertion:
    """Every part of one assertion."""
    challenge: str
    origin: str
    credential: "Credential"
    session: Optional[str] = None                # the verify ceremony's session
    flags: int = UP | UV
    sign_count: int = 1
    rp_id_hash: bytes = RP_ID_HASH
    extensions: bytes = b""
    auth_tail: bytes = b""
    auth_bytes: Optional[bytes] = None           # replaces the authenticator data
    client: dict = None
    client_bytes: Optional[bytes] = None
    signer: Optional[Key] = None                 # None: the credential's key
    signed_extra: bytes = b""                    # signs authData || hash || this (a different message)
    signature: Optional[Callable] = None         # rewrites the signature bytes
    user_handle: object = "owner"                # "owner", None (absent) or bytes
    json_id: Optional[str] = None
    json_raw_id: Optional[str] = None

    def __post_init__(self):
        self.client = {"type": "webauthn.get", "challenge": self.challenge, "origin": self.origin, "crossOrigin": False}


def client_data(parts):
    if parts.client_bytes is not None:
        return parts.client_bytes
    return compact_json({name: value for name, value in parts.client.items() if value is not DELETE})


def attestation_statement(parts, auth, client, attestor):
    signed = auth + sha256(client)
    if parts.fmt == "none":
        return {}
    if parts.fmt == "packed":
        return {"alg": parts.statement_alg or parts.key.alg, "sig": parts.key.sign(signed)}
    key, leaf = attestor.leaf(parts.aaguid, **parts.certificate)
    if parts.fmt == "x5c":
        chain = [leaf, attestor.root.public_bytes(serialization.Encoding.DER)] if parts.chain_root else [leaf]
        return {"alg": parts.statement_alg or key.alg, "sig": key.sign(signed), "x5c": chain}
    if parts.fmt == "fido-u2f":
        cose = parts.cose or parts.key.cose()
        u2f = b"\x00" + parts.rp_id_hash + sha256(client) + parts.credential_id + b"\x04" + cose[-2] + cose[-3]
        return {"sig": key.sign(u2f), "x5c": [leaf]}
    raise ValueError(parts.fmt)


def build_registration(parts, attestor):
    """RegistrationResponseJSON as a browser's toJSON() gives it."""
    client = client_data(parts)
    length = len(parts.credential_id) if parts.credential_id_length is None else parts.credential_id_length
    auth = (parts.rp_id_hash + bytes([parts.flags]) + struct.pack(">I", parts.sign_count) + parts.aaguid + struct.pack(">H", length)
            + parts.credential_id + cbor(parts.cose or parts.key.cose()) + parts.extensions + parts.auth_tail)
    statement = parts.statement if parts.statement is not None else attestation_statement(parts, auth, client, attestor)
    if isinstance(statement, dict):
        statement = dict(statement, **parts.statement_extra)
    name = parts.fmt_name if parts.fmt_name is not None else ("packed" if parts.fmt == "x5c" else parts.fmt)
    attestation_object = cbor({"fmt": name, "attStmt": statement, "authData": auth}) + parts.object_tail
    identifier = parts.json_id or b64url(parts.credential_id)
    return {"id": identifier, "rawId": parts.json_raw_id or identifier, "type": "public-key",
            "response": {"clientDataJSON": b64url(client), "attestationObject": b64url(attestation_object), "transports": ["internal"]},
            "authenticatorAttachment": "platform", "clientExtensionResults": {}}


def build_assertion(parts):
    """AuthenticationResponseJSON as a browser's toJSON() gives it."""
    client = client_data(parts)
    auth = parts.auth_bytes
    if auth is None:
        auth = parts.rp_id_hash + bytes([parts.flags]) + struct.pack(">I", parts.sign_count) + parts.extensions + parts.auth_tail
    signature = (parts.signer or parts.credential.key).sign(auth + sha256(client) + parts.signed_extra)
    if parts.signature:
        signature = parts.signature(signature)
    handle = parts.credential.handle if parts.user_handle == "owner" else parts.user_handle
    identifier = parts.json_id or b64url(parts.credential.credential_id)
    response = {"clientDataJSON": b64url(client), "authenticatorData": b64url(auth), "signature": b64url(signature)}
    if handle is not None:
        response["userHandle"] = b64url(handle)
    return {"id": identifier, "rawId": parts.json_raw_id or identifier, "type": "public-key", "response": response,
            "authenticatorAttachment": "platform", "clientExtensionResults": {}}


# MARK: the other relying parties

def py_webauthn_register(credential, challenge, origin):
    verify_registration_response(
        credential=copy.deepcopy(credential), expected_challenge=b64url_decode(challenge), expected_origin=origin, expected_rp_id=RP_ID,
        require_user_verification=True, supported_pub_key_algs=[COSEAlgorithmIdentifier(alg) for alg in SERVER_ALGS])


def py_webauthn_assert(credential, challenge, origin, stored, require_uv):
    verify_authentication_response(
        credential=copy.deepcopy(credential), expected_challenge=b64url_decode(challenge), expected_origin=origin, expected_rp_id=RP_ID,
        credential_public_key=stored.cose_bytes, credential_current_sign_count=stored.count, require_user_verification=require_uv)


def fido2_server(origin):
    def verify_attestation(attestation_object, client_data_hash):
        if attestation_object.fmt not in SERVER_FORMATS:
            raise ValueError(f"format {attestation_object.fmt} not accepted")
        Attestation.for_type(attestation_object.fmt)().verify(attestation_object.att_stmt, attestation_object.auth_data, client_data_hash)
    return Fido2Server({"id": RP_ID, "name": "Latchkey"}, attestation="direct", verify_origin=lambda given: given == origin,
                       verify_attestation=verify_attestation)


def fido2_register(credential, challenge, origin):
    auth_data = fido2_server(origin).register_complete({"challenge": challenge, "user_verification": "required"}, copy.deepcopy(credential))
    if auth_data.credential_data.public_key.get(3) not in SERVER_ALGS:
        raise ValueError("algorithm not offered")


def fido2_assert(credential, challenge, origin, stored, require_uv):
    record = AttestedCredentialData.create(Aaguid(AAGUID), stored.credential_id, CoseKey.parse(cbor2.loads(stored.cose_bytes)))
    state = {"challenge": challenge, "user_verification": "required" if require_uv else "preferred"}
    fido2_server(origin).authenticate_complete(state, [record], copy.deepcopy(credential))
    count = struct.unpack(">I", b64url_decode(credential["response"]["authenticatorData"])[33:37])[0]
    if (count or stored.count) and count <= stored.count:
        raise ValueError("sign count did not grow")


def opinion(verify, *arguments):
    """(accepted, why not) of one relying party's verdict."""
    try:
        verify(*arguments)
        return True, ""
    except Exception as error:  # any refusal, whatever its type
        return False, f"{type(error).__name__}: {error}"


# MARK: cases

@dataclass
class Case:
    """One mutation of one ceremony. `mutate(parts, oracle)` turns the knobs before signing.
    `listed`: py_webauthn differs by design; the reason, and `server` (what Latchkey must
    answer: "accept" or "refuse"). `rp_choice`: the specification leaves it to the RP.
    `expect`: the (reason, detail) pairs a refusal may carry."""
    group: str
    name: str
    ceremony: str
    mutate: Callable = lambda parts, oracle: None
    alg: int = -7
    fmt: str = "none"
    credential: tuple = ("shared",)
    as_stranger: bool = False              # step-up: run it on another user's session
    options_for: str = ""                  # sign-in: options asked with a username ("owner", "stranger", "unknown")
    listed: str = ""
    server: str = ""
    rp_choice: str = ""
    expect: tuple = ()


def knobs(**values):
    """A mutation setting parts' fields."""
    def mutate(parts, oracle):
        for name, value in values.items():
            setattr(parts, name, value)
    return mutate


def client(**members):
    """A mutation setting (or, with DELETE, removing) clientData members."""
    def mutate(parts, oracle):
        parts.client.update(members)
    return mutate


def toggle(bit):
    def mutate(parts, oracle):
        parts.flags ^= bit
    return mutate


def flip_rp_id_hash(index):
    def mutate(parts, oracle):
        parts.rp_id_hash = parts.rp_id_hash[:index] + bytes([parts.rp_id_hash[index] ^ 0xFF]) + parts.rp_id_hash[index + 1:]
    return mutate


def flip_signature_byte(index):
    """Byte `index` of the signature xor 1 (ES256 DER is 70-72 bytes: past its end, its last byte)."""
    def rewrite(signature):
        at = min(index, len(signature) - 1)
        return signature[:at] + bytes([signature[at] ^ 0x01]) + signature[at + 1:]
    return knobs(signature=rewrite)


def cose_edit(**labels):
    """A mutation editing the credential's COSE_Key: label=value, or DELETE."""
    def mutate(parts, oracle):
        cose = parts.key.cose()
        for label, value in labels.items():
            number = int(label.replace("m", "-"))
            if value is DELETE:
                cose.pop(number, None)
            else:
                cose[number] = value
        parts.cose = cose
    return mutate


def other_key(alg):
    """The credential key of another algorithm (its own COSE_Key, its own attestation signature)."""
    return knobs(key=Key(alg))


def high_s(signature):
    r, s = decode_dss_signature(signature)
    return encode_dss_signature(r, P256_ORDER - s)


def raw_r_s(signature):
    r, s = decode_dss_signature(signature)
    return r.to_bytes(32, "big") + s.to_bytes(32, "big")


def ber_long_length(signature):
    """DER's SEQUENCE length written in the long form (0x81 n): BER, not DER."""
    return signature[:1] + b"\x81" + signature[1:]


def padded_integer(signature):
    """r with a needless leading zero byte: not the minimal (DER) encoding."""
    r, s = decode_dss_signature(signature)
    r_bytes = b"\x00" + r.to_bytes((r.bit_length() + 8) // 8, "big")
    s_bytes = s.to_bytes((s.bit_length() + 8) // 8, "big")
    body = b"\x02" + bytes([len(r_bytes)]) + r_bytes + b"\x02" + bytes([len(s_bytes)]) + s_bytes
    return b"\x30" + bytes([len(body)]) + body


def point_off_curve(parts, oracle):
    cose = parts.key.cose()
    cose[-3] = bytes([cose[-3][0]]) + bytes(31)[:-1] + b"\x07"  # y is no longer on P-256 for this x
    parts.cose = cose


def standard_base64(parts, oracle):
    """The same challenge bytes in standard base64 ('+', '/', '=' padding) instead of base64url."""
    parts.client["challenge"] = base64.b64encode(b64url_decode(parts.challenge)).decode()


def origin_variant(template):
    """clientData's origin from a template of {origin} (ours) and {port} (ours)."""
    def mutate(parts, oracle):
        parts.client["origin"] = template.format(origin=parts.origin, port=parts.origin.rpartition(":")[2])
    return mutate


def with_challenge(kind):
    """A challenge that is not this ceremony's: unknown, used, or from another ceremony/user."""
    def mutate(parts, oracle):
        parts.client["challenge"] = oracle.other_challenge(kind, parts)
    return mutate


ORIGIN_VARIANTS = {
    "another port": "http://localhost:1", "https instead of http": "https://localhost:{port}", "another host (127.0.0.1)": "http://127.0.0.1:{port}",
    "a subdomain": "http://evil.localhost:{port}", "no port": "http://localhost", "a trailing slash": "{origin}/",
    "upper case": "HTTP://LOCALHOST:{port}", "a host that ends like it": "http://localhost:{port}.evil.example", "empty": "",
}

FLAG_EXPECT = {UP: (("invalid_credentials", "user_not_present"),), UV: (("invalid_credentials", "user_not_verified"),),
               BS: (("invalid_credentials", "malformed"),), AT: (("invalid_credentials", "malformed"),), ED: (("invalid_credentials", "malformed"),)}
REFUSED_MALFORMED = (("invalid_credentials", "malformed"),)
WRONG_TYPE = (("invalid_credentials", "wrong_type"),)
ORIGIN_REFUSED = (("invalid_credentials", "origin_not_allowed"),)
RP_ID_REFUSED = (("invalid_credentials", "rp_id_mismatch"),)
UNSUPPORTED_ALG = (("invalid_credentials", "unsupported_algorithm"),)
BAD_ATTESTATION = (("invalid_credentials", "bad_attestation"),)
# An attestation signature that does not verify: the contract has both words for it.
BAD_ATTESTATION_SIGNATURE = (("invalid_credentials", "bad_signature"), ("invalid_credentials", "bad_attestation"))
PLAIN_REFUSAL = (("invalid_credentials", None),)
COUNTER = (("invalid_credentials", "counter_regressed"),)

L3_KEY = ("py_webauthn with attestation none only reads alg and never builds the key; a COSE_Key that is not a usable key for "
          "its alg cannot verify any assertion (L3 §6.5.2 credentialPublicKey, RFC 9053 §7.1.1 / RFC 8230 §4): Latchkey refuses it")


def registration_cases():
    cases = [
        Case("baseline", "none, ES256", "register"),
        Case("baseline", "none, RS256", "register", alg=-257),
        Case("baseline", "packed self attestation, ES256", "register", fmt="packed"),
        Case("baseline", "packed self attestation, RS256", "register", alg=-257, fmt="packed"),
        Case("baseline", "packed x5c attestation (ES256 leaf), ES256 credential", "register", fmt="x5c"),
        Case("baseline", "packed x5c attestation (ES256 leaf), RS256 credential", "register", alg=-257, fmt="x5c"),
        Case("baseline", "packed x5c attestation (RS256 leaf), ES256 credential", "register", fmt="x5c", mutate=knobs(certificate={"key_alg": -257})),
        Case("baseline", "packed x5c leaf without the optional AAGUID extension", "register", fmt="x5c",
             mutate=knobs(certificate={"aaguid_ext": "absent"})),
        Case("baseline", "packed x5c with the chain [leaf, root]", "register", fmt="x5c", mutate=knobs(chain_root=True)),
        Case("baseline", "RS256 with a 4096-bit key (packed self)", "register", alg=-257, fmt="packed", mutate=knobs(key=Key(-257, rsa_bits=4096))),
        Case("baseline", "RS256 with e = 3 (packed self)", "register", alg=-257, fmt="packed", mutate=knobs(key=Key(-257, rsa_exponent=3))),
    ]
    for fmt in ("none", "packed"):
        for bit, name in FLAG_NAMES.items():
            cases.append(Case("flags", f"{name} toggled ({fmt})", "register", fmt=fmt, mutate=toggle(bit), expect=FLAG_EXPECT.get(bit, ())))
    cases += [
        Case("flags", "BE and BS both set", "register", mutate=knobs(flags=UP | UV | AT | BE | BS)),
        Case("flags", "UP cleared, UV still set", "register", mutate=knobs(flags=UV | AT), expect=FLAG_EXPECT[UP]),
        Case("flags", "ED with an extensions map", "register", mutate=knobs(flags=UP | UV | AT | ED, extensions=cbor({"credProtect": 2}))),
        Case("flags", "ED with extensions that are not a map", "register", mutate=knobs(flags=UP | UV | AT | ED, extensions=cbor(2)),
             listed="L3 §6.1: the extensions part is a CBOR map; py_webauthn takes any CBOR item", server="refuse", expect=REFUSED_MALFORMED),
    ]
    cases += [Case("rp id hash", f"byte {index} flipped", "register", mutate=flip_rp_id_hash(index), expect=RP_ID_REFUSED) for index in range(32)]
    cases.append(Case("rp id hash", "sha256('example.com')", "register", mutate=knobs(rp_id_hash=sha256(b"example.com")), expect=RP_ID_REFUSED))
    cases += [Case("sign count", f"registered with {count}", "register", mutate=knobs(sign_count=count)) for count in (1, 1000, 0xFFFFFFFF)]
    cases += client_data_cases("register", "webauthn.create")
    cases += [
        Case("challenge", "another user's registration challenge", "register", mutate=with_challenge("stranger-register"),
             expect=(("invalid_token", "foreign"),)),
        Case("challenge", "a sign-in challenge", "register", mutate=with_challenge("login"), expect=(("invalid_token", "foreign"),)),
    ]
    cases += [
        Case("cose", "EdDSA (-8), not offered", "register", mutate=other_key(-8), expect=UNSUPPORTED_ALG),
        Case("cose", "ES384 (-35), not offered", "register", mutate=other_key(-35), expect=UNSUPPORTED_ALG),
        Case("cose", "ES512 (-36), not offered", "register", mutate=other_key(-36), expect=UNSUPPORTED_ALG),
        Case("cose", "EdDSA (-8) with packed self attestation", "register", fmt="packed", mutate=other_key(-8), expect=UNSUPPORTED_ALG),
        Case("cose", "ES384 (-35) with packed self attestation", "register", fmt="packed", mutate=other_key(-35), expect=UNSUPPORTED_ALG),
    ]
    for fmt in ("none", "packed"):
        lenient = fmt == "none"
        cases += [
            Case("cose", f"alg absent ({fmt})", "register", fmt=fmt, mutate=cose_edit(**{"3": DELETE}), expect=REFUSED_MALFORMED),
            Case("cose", f"ES256 with kty 3 (RSA) ({fmt})", "register", fmt=fmt, mutate=cose_edit(**{"1": 3}), expect=REFUSED_MALFORMED,
                 listed=L3_KEY if lenient else "", server="refuse" if lenient else ""),
            Case("cose", f"ES256 with kty 1 (OKP) ({fmt})", "register", fmt=fmt, mutate=cose_edit(**{"1": 1}), expect=REFUSED_MALFORMED,
                 listed=L3_KEY if lenient else "", server="refuse" if lenient else ""),
            Case("cose", f"ES256 on crv 2 (P-384) ({fmt})", "register", fmt=fmt, mutate=cose_edit(m1=2), expect=UNSUPPORTED_ALG,
                 listed=L3_KEY if lenient else "", server="refuse" if lenient else ""),
            Case("cose", f"ES256 with a point off the curve ({fmt})", "register", fmt=fmt, mutate=point_off_curve, expect=REFUSED_MALFORMED,
                 listed=L3_KEY if lenient else "", server="refuse" if lenient else ""),
            Case("cose", f"ES256 with a 31-byte x ({fmt})", "register", fmt=fmt, expect=REFUSED_MALFORMED,
                 mutate=lambda parts, oracle: cose_edit(m2=parts.key.cose()[-2][1:])(parts, oracle),
                 listed=L3_KEY if lenient else "", server="refuse" if lenient else ""),
            Case("cose", f"RS256 with kty 2 (EC2) ({fmt})", "register", alg=-257, fmt=fmt, mutate=cose_edit(**{"1": 2}), expect=REFUSED_MALFORMED),
            Case("cose", f"a private key (d, label -4) beside the public one ({fmt})", "register", fmt=fmt, expect=REFUSED_MALFORMED,
                 mutate=lambda parts, oracle: cose_edit(m4=parts.key.private.private_numbers().private_value.to_bytes(32, "big"))(parts, oracle),
                 listed="a COSE_Key holding the private key is a broken authenticator (RFC 9053 §7.1.1: d is the private part); "
                        "py_webauthn ignores label -4", server="refuse"),
        ]
    weak_rsa = "L3 sets no RSA key size; Latchkey refuses moduli under 2048 bits (NIST SP 800-131A), py_webauthn takes any"
    cases += [
        Case("cose", "RS256 with a 1024-bit key (none)", "register", alg=-257, mutate=knobs(key=Key(-257, rsa_bits=1024)), rp_choice=weak_rsa),
        Case("cose", "RS256 with a 1024-bit key (packed self)", "register", alg=-257, fmt="packed", mutate=knobs(key=Key(-257, rsa_bits=1024)),
             rp_choice=weak_rsa),
        Case("cose", "RS256 with e = 1 (none)", "register", alg=-257, mutate=cose_edit(m2=b"\x01"), expect=UNSUPPORTED_ALG + REFUSED_MALFORMED,
             listed="an RSA key with e = 1 makes every padded message its own signature (RFC 8017 §3.1: e >= 3); " + L3_KEY.split(";")[0],
             server="refuse"),
    ]
    cases += [
        Case("credential id", "length field one more than the id", "register",
             mutate=lambda p, o: setattr(p, "credential_id_length", len(p.credential_id) + 1)),
        Case("credential id", "length field one less than the id", "register",
             mutate=lambda p, o: setattr(p, "credential_id_length", len(p.credential_id) - 1)),
        Case("credential id", "length field 0", "register", mutate=knobs(credential_id_length=0)),
        Case("credential id", "length field past the end of authData", "register", mutate=knobs(credential_id_length=0xFFFF)),
        Case("credential id", "1 byte", "register", mutate=knobs(credential_id=secrets.token_bytes(1))),
        Case("credential id", "1023 bytes (the limit)", "register", mutate=lambda p, o: setattr(p, "credential_id", secrets.token_bytes(1023))),
        Case("credential id", "1024 bytes", "register", mutate=lambda p, o: setattr(p, "credential_id", secrets.token_bytes(1024)),
             listed="L3 §7.1 step 25: a credentialId over 1023 bytes SHOULD fail the ceremony; py_webauthn has no limit", server="refuse"),
        Case("credential id", "the JSON id/rawId name another credential than the attested one", "register",
             mutate=lambda p, o: setattr(p, "json_id", b64url(secrets.token_bytes(32))), expect=REFUSED_MALFORMED,
             listed="Latchkey stores the attested credential under the id the response names: the two must be one credential "
                    "(L3 §7.1: credentialRecord.id is the attested credentialId); py_webauthn never compares rawId with authData",
             server="refuse"),
        Case("credential id", "id and rawId differ", "register", mutate=lambda p, o: setattr(p, "json_raw_id", b64url(secrets.token_bytes(32)))),
        Case("credential id", "already registered (same id, a fresh ceremony)", "register", mutate=lambda p, o: o.reuse_registered_id(p),
             listed="L3 §7.1 step 26: a credentialId already registered for any user fails the ceremony; py_webauthn keeps no "
                    "credential records", server="refuse", expect=(("conflict", None),)),
    ]
    cases += [
        Case("trailing bytes", "after the credential public key in authData", "register", mutate=knobs(auth_tail=b"\x00"), expect=REFUSED_MALFORMED),
        Case("trailing bytes", "after the attestation object's CBOR map", "register", mutate=knobs(object_tail=b"\x00"),
             rp_choice="cbor2 (py_webauthn) decodes the first item and ignores the rest; the attestation object is one CBOR map "
                       "(L3 §6.5.4), what follows it is not covered by any signature"),
    ]
    cases += [
        Case("attestation", "packed self: alg -257 for an ES256 key", "register", fmt="packed", mutate=knobs(statement_alg=-257),
             expect=BAD_ATTESTATION),
        Case("attestation", "packed self: alg -7 for an RS256 key", "register", alg=-257, fmt="packed", mutate=knobs(statement_alg=-7),
             expect=BAD_ATTESTATION),
        Case("attestation", "packed self: alg absent", "register", fmt="packed",
             mutate=lambda p, o: setattr(p, "statement", {"sig": p.key.sign(b"x")})),
        Case("attestation", "packed self: signature by another key", "register", fmt="packed",
             mutate=lambda p, o: setattr(p, "statement", {"alg": -7, "sig": Key(-7).sign(b"anything")}), expect=BAD_ATTESTATION_SIGNATURE),
        Case("attestation", "packed self: the key's signature over other bytes", "register", fmt="packed",
             mutate=lambda p, o: setattr(p, "statement", {"alg": -7, "sig": p.key.sign(b"other bytes")}), expect=BAD_ATTESTATION_SIGNATURE),
        Case("attestation", "packed x5c: alg -257 with an ES256 leaf", "register", fmt="x5c", mutate=knobs(statement_alg=-257),
             expect=BAD_ATTESTATION_SIGNATURE),
        Case("attestation", "packed x5c: x5c holds bytes that are no certificate", "register", fmt="x5c",
             mutate=lambda p, o: setattr(p, "statement", {"alg": -7, "sig": b"\x30\x00", "x5c": [b"not a certificate"]})),
        Case("attestation", "packed x5c: signed by a key other than the leaf's", "register", fmt="x5c",
             mutate=lambda p, o: setattr(p, "statement", {"alg": -7, "sig": Key(-7).sign(b"x"), "x5c": [o.attestor.leaf(AAGUID)[1]]}),
             expect=BAD_ATTESTATION_SIGNATURE),
        Case("attestation", "none with a sig in attStmt", "register", mutate=knobs(statement={"sig": b"\x01\x02"})),
        Case("attestation", "none with an unknown member in attStmt", "register", mutate=knobs(statement={"foo": 1}),
             listed="L3 §8.7: a none attestation's attStmt is an empty map; py_webauthn only looks for members it knows", server="refuse"),
        Case("attestation", "none with an attStmt that is not a map", "register", mutate=knobs(statement=[]),
             listed="L3 §6.5.4/§8.7: attStmt is a map (empty for none); py_webauthn looks members up without checking the type", server="refuse"),
        Case("attestation", "unknown format name", "register", mutate=knobs(fmt_name="latchkey-interop"),
             expect=(("invalid_credentials", "unsupported_format"),)),
        Case("attestation", "format name that is not a string", "register", mutate=knobs(fmt_name=7)),
        Case("attestation", "tpm with an empty attStmt", "register", mutate=knobs(fmt_name="tpm"),
             expect=(("invalid_credentials", "unsupported_format"), ("invalid_credentials", "format_not_allowed"))),
        Case("attestation", "apple with an empty attStmt", "register", mutate=knobs(fmt_name="apple"),
             expect=(("invalid_credentials", "bad_attestation"), ("invalid_credentials", "malformed"))),
        Case("attestation", "a valid fido-u2f attestation", "register", fmt="fido-u2f", mutate=knobs(aaguid=bytes(16)),
             listed="Latchkey's formats are none, packed and apple (--webauthn-attestation-formats); py_webauthn verifies fido-u2f",
             server="refuse", expect=(("invalid_credentials", "unsupported_format"), ("invalid_credentials", "format_not_allowed"))),
    ]
    leaf_rule = "L3 §8.2.1: packed attestation certificate requirements; py_webauthn (without trust anchors) checks none of them"
    cases += [
        Case("x5c certificate", "OU is not 'Authenticator Attestation'", "register", fmt="x5c", mutate=knobs(certificate={"ou": "Other Unit"}),
             listed=leaf_rule, server="refuse", expect=BAD_ATTESTATION),
        Case("x5c certificate", "no OU", "register", fmt="x5c", mutate=knobs(certificate={"ou": None}), listed=leaf_rule, server="refuse",
             expect=BAD_ATTESTATION),
        Case("x5c certificate", "no C", "register", fmt="x5c", mutate=knobs(certificate={"country": None}), listed=leaf_rule, server="refuse",
             expect=BAD_ATTESTATION),
        Case("x5c certificate", "basicConstraints CA true", "register", fmt="x5c", mutate=knobs(certificate={"ca": True}), listed=leaf_rule,
             server="refuse", expect=BAD_ATTESTATION),
        Case("x5c certificate", "AAGUID extension names another AAGUID", "register", fmt="x5c",
             mutate=knobs(certificate={"aaguid_ext": bytes(range(16))}), listed=leaf_rule, server="refuse", expect=BAD_ATTESTATION),
        Case("x5c certificate", "AAGUID extension marked critical", "register", fmt="x5c",
             mutate=knobs(certificate={"aaguid_critical": True}), listed=leaf_rule, server="refuse", expect=BAD_ATTESTATION),
    ]
    return cases


def client_data_cases(ceremony, own_type):
    """The clientDataJSON mutations every ceremony gets."""
    other_type = "webauthn.get" if own_type == "webauthn.create" else "webauthn.create"
    cases = [
        Case("client data", f"type {other_type}", ceremony, mutate=client(type=other_type), expect=WRONG_TYPE),
        Case("client data", "type empty", ceremony, mutate=client(type=""), expect=WRONG_TYPE),
        Case("client data", "type payment.get", ceremony, mutate=client(type="payment.get"), expect=WRONG_TYPE),
        Case("client data", "type absent", ceremony, mutate=client(type=DELETE), expect=REFUSED_MALFORMED),
        Case("client data", "not JSON", ceremony, mutate=knobs(client_bytes=b"{not json"), expect=REFUSED_MALFORMED),
        Case("client data", "an extra member (as Chrome adds)", ceremony,
             mutate=client(other_keys_can_be_added_here="do not compare clientDataJSON")),
        Case("client data", "members in another order", ceremony,
             mutate=lambda p, o: setattr(p, "client_bytes", compact_json(dict(reversed(list(p.client.items())))))),
        Case("client data", "tokenBinding present", ceremony, mutate=client(tokenBinding={"status": "present", "id": "AAAA"})),
        Case("client data", "crossOrigin absent", ceremony, mutate=client(crossOrigin=DELETE)),
        Case("client data", "crossOrigin true", ceremony, mutate=client(crossOrigin=True), expect=(("invalid_credentials", "cross_origin"),),
             listed="Latchkey is never framed by another origin: crossOrigin true is refused (contract reason cross_origin; "
                    "L3 §5.8.1, §13.4.9); py_webauthn reads crossOrigin and never checks it", server="refuse"),
        Case("client data", "crossOrigin true with a topOrigin", ceremony, mutate=client(crossOrigin=True, topOrigin="https://evil.example"),
             expect=(("invalid_credentials", "cross_origin"),),
             listed="L3 §7.1 step 10 / §7.2 step 14: a topOrigin the RP does not expect to frame it fails; py_webauthn ignores topOrigin",
             server="refuse"),
        Case("client data", "crossOrigin the string \"true\"", ceremony, mutate=client(crossOrigin="true"), expect=REFUSED_MALFORMED,
             listed="L3 §5.8.1: crossOrigin is a boolean; py_webauthn converts any value with bool()", server="refuse"),
        Case("challenge", "unknown (32 random bytes)", ceremony, mutate=with_challenge("unknown"), expect=(("invalid_token", "unknown"),)),
        Case("challenge", "used up by a refused response before", ceremony, mutate=with_challenge("used"), expect=(("invalid_token", "used"),)),
        Case("challenge", "absent", ceremony, mutate=client(challenge=DELETE), expect=REFUSED_MALFORMED),
        Case("challenge", "with '=' padding", ceremony, mutate=lambda p, o: p.client.update(challenge=p.challenge + "="),
             expect=REFUSED_MALFORMED,
             listed="L3 §7.1 step 8 / §7.2 step 12: C.challenge must equal the base64url encoding (no padding, §5.8.1); "
                    "py_webauthn decodes leniently and compares bytes", server="refuse"),
        Case("challenge", "in standard base64 (+, /, padding)", ceremony, mutate=standard_base64, expect=REFUSED_MALFORMED,
             listed="L3 §7.1 step 8 / §7.2 step 12: C.challenge must equal the base64url encoding; py_webauthn's decoder also "
                    "takes + and /", server="refuse"),
        Case("challenge", "one character short", ceremony, mutate=lambda p, o: p.client.update(challenge=p.challenge[:-1])),
    ]
    twice = ("a member given twice reads differently in different parsers (RFC 8259 §4: names SHOULD be unique): Python's json "
             "keeps the last, a first-wins parser the first; Latchkey refuses the ambiguity")
    doubled = '{"type":"%s","challenge":"%s","origin":"%s","crossOrigin":false,"%s":"%s"}'
    cases += [
        Case("client data", f"type twice, {other_type} then {own_type}", ceremony, expect=REFUSED_MALFORMED, listed=twice, server="refuse",
             mutate=lambda p, o: setattr(p, "client_bytes", (doubled % (other_type, p.challenge, p.origin, "type", own_type)).encode())),
        Case("client data", f"type twice, {own_type} then {other_type}", ceremony, expect=REFUSED_MALFORMED,
             mutate=lambda p, o: setattr(p, "client_bytes", (doubled % (own_type, p.challenge, p.origin, "type", other_type)).encode())),
        Case("client data", "origin twice, a foreign one then ours", ceremony, expect=REFUSED_MALFORMED, listed=twice, server="refuse",
             mutate=lambda p, o: setattr(p, "client_bytes",
                                         (doubled % (own_type, p.challenge, "https://evil.example", "origin", p.origin)).encode())),
        Case("client data", "a UTF-8 byte order mark first", ceremony,
             mutate=lambda p, o: setattr(p, "client_bytes", b"\xef\xbb\xbf" + compact_json(p.client)),
             rp_choice="clients serialize clientDataJSON without a BOM (L3 §5.8.1.1); Python's json.loads(bytes) skips one"),
    ]
    for what, template in ORIGIN_VARIANTS.items():
        cases.append(Case("origin", what, ceremony, expect=ORIGIN_REFUSED, mutate=origin_variant(template)))
    cases.append(Case("origin", "absent", ceremony, mutate=client(origin=DELETE), expect=REFUSED_MALFORMED))
    return cases


def assertion_cases():
    cases = [
        Case("baseline", "sign-in, ES256", "login"),
        Case("baseline", "sign-in, RS256", "login", alg=-257),
        Case("baseline", "step-up, ES256", "verify"),
        Case("baseline", "step-up, RS256", "verify", alg=-257),
        Case("baseline", "sign-in with the user handle absent", "login", mutate=knobs(user_handle=None),
             rp_choice="L3 §7.2 step 6 asks for response.userHandle when the user was not identified first (usernameless); "
                       "Latchkey finds the owner by the credential id alone (unique across users)"),
        Case("baseline", "sign-in with an empty user handle", "login", mutate=knobs(user_handle=b""),
             rp_choice="an empty userHandle is how some clients say 'none'; same rule as absent"),
    ]
    for bit, name in FLAG_NAMES.items():
        expect = FLAG_EXPECT.get(bit, ())
        if bit == UV:
            expect = ()
        if bit == BE:
            cases.append(Case("flags", f"{name} toggled (sign-in, credential registered without BE)", "login", mutate=toggle(bit),
                              rp_choice="L3 §7.2 (backup state): BE should not change for a credential; checking it is for an RP "
                                        "whose policy uses backup state"))
            continue
        cases.append(Case("flags", f"{name} toggled (sign-in)", "login", mutate=toggle(bit), expect=expect))
    cases += [
        Case("flags", "UV cleared (step-up)", "verify", mutate=toggle(UV), expect=FLAG_EXPECT[UV]),
        Case("flags", "UP cleared (step-up)", "verify", mutate=toggle(UP), expect=FLAG_EXPECT[UP]),
        Case("flags", "UP cleared, UV set (sign-in)", "login", mutate=knobs(flags=UV), expect=FLAG_EXPECT[UP]),
        Case("flags", "ED with an extensions map (sign-in)", "login", mutate=knobs(flags=UP | UV | ED, extensions=cbor({"credProtect": 1}))),
        Case("flags", "BE and BS set on a backup-eligible credential", "login", credential=("backup", 0, BE),
             mutate=knobs(flags=UP | UV | BE | BS)),
    ]
    cases += [Case("rp id hash", f"byte {index} flipped", "login", mutate=flip_rp_id_hash(index), expect=RP_ID_REFUSED) for index in range(32)]
    cases += [
        Case("sign count", "both 0", "login", credential=("zero", 0), mutate=knobs(sign_count=0)),
        Case("sign count", "both 0 again", "login", credential=("zero", 0), mutate=knobs(sign_count=0)),
        Case("sign count", "0 stored, 5 sent", "login", credential=("grows", 0), mutate=knobs(sign_count=5)),
        Case("sign count", "5 stored, 0 sent (lower)", "login", credential=("grows", 0), mutate=knobs(sign_count=0), expect=COUNTER),
        Case("sign count", "10 stored, 11 sent (higher)", "login", credential=("ten-higher", 10), mutate=knobs(sign_count=11)),
        Case("sign count", "11 stored, 2^32-1 sent", "login", credential=("ten-higher", 10), mutate=knobs(sign_count=0xFFFFFFFF)),
        Case("sign count", "10 stored, 10 sent (equal)", "login", credential=("ten-equal", 10), mutate=knobs(sign_count=10), expect=COUNTER),
        Case("sign count", "10 stored, 9 sent (lower)", "login", credential=("ten-lower", 10), mutate=knobs(sign_count=9), expect=COUNTER),
        Case("sign count", "10 stored, 9 sent (lower, step-up)", "verify", credential=("ten-lower-verify", 10), mutate=knobs(sign_count=9),
             expect=COUNTER),
        Case("sign count", "after a regression, a good assertion with a higher count", "login", credential=("ten-equal", 10),
             mutate=knobs(sign_count=50), expect=PLAIN_REFUSAL + COUNTER,
             listed="L3 §6.1.1 / §7.2 step 22: a counter that did not grow signals a cloned authenticator, and what follows is the RP's "
                    "policy: Latchkey flags the passkey and refuses it from then on; py_webauthn keeps no state", server="refuse"),
    ]
    for alg, size in ((-7, 72), (-257, 256)):
        label = "ES256" if alg == -7 else "RS256"
        cases += [Case("signature", f"{label} byte {index} flipped (DER's last if shorter)" if alg == -7 else f"{label} byte {index} flipped",
                       "login", alg=alg, mutate=flip_signature_byte(index), expect=PLAIN_REFUSAL) for index in range(size)]
        cases += [
            Case("signature", f"{label} last byte cut off", "login", alg=alg, mutate=knobs(signature=lambda s: s[:-1]), expect=PLAIN_REFUSAL),
            Case("signature", f"{label} a zero byte appended", "login", alg=alg, mutate=knobs(signature=lambda s: s + b"\x00"), expect=PLAIN_REFUSAL),
            Case("signature", f"{label} a zero byte prepended", "login", alg=alg, mutate=knobs(signature=lambda s: b"\x00" + s),
                 expect=PLAIN_REFUSAL),
            Case("signature", f"{label} empty", "login", alg=alg, mutate=knobs(signature=lambda s: b""), expect=PLAIN_REFUSAL),
            Case("signature", f"{label} by another key", "login", alg=alg, mutate=knobs(signer=Key(alg)), expect=PLAIN_REFUSAL),
            Case("signature", f"{label} over another message", "login", alg=alg, mutate=knobs(signed_extra=b"\x00"), expect=PLAIN_REFUSAL),
            Case("signature", f"{label} step-up, byte 10 flipped", "verify", alg=alg, mutate=flip_signature_byte(10), expect=PLAIN_REFUSAL),
        ]
    cases += [
        Case("signature", "ES256 high-S twin (s = n - s)", "login", mutate=knobs(signature=high_s)),
        Case("signature", "ES256 as raw r||s (not DER)", "login", mutate=knobs(signature=raw_r_s), expect=PLAIN_REFUSAL),
        Case("signature", "ES256 DER with a long-form length (BER)", "login", mutate=knobs(signature=ber_long_length), expect=PLAIN_REFUSAL),
        Case("signature", "ES256 DER with a needless leading zero in r", "login", mutate=knobs(signature=padded_integer), expect=PLAIN_REFUSAL),
    ]
    cases += client_data_cases("login", "webauthn.get")
    cases += [
        Case("challenge", "a registration challenge", "login", mutate=with_challenge("register"), expect=(("invalid_token", "foreign"),)),
        Case("challenge", "a step-up challenge", "login", mutate=with_challenge("verify"), expect=(("invalid_token", "foreign"),)),
        Case("challenge", "a sign-in challenge at step-up", "verify", mutate=with_challenge("login"), expect=(("invalid_token", "foreign"),)),
        Case("challenge", "another user's step-up challenge", "verify", mutate=with_challenge("stranger-verify"),
             expect=(("invalid_token", "foreign"),)),
        Case("challenge", "options asked with the owner's username", "login", options_for="owner"),
        Case("challenge", "options asked with another user's username", "login", options_for="stranger", expect=PLAIN_REFUSAL,
             listed="L3 §7.2 step 6: a user identified before the ceremony must own the credential; " + "py_webauthn keeps no users",
             server="refuse"),
        Case("challenge", "options asked with a username nobody has", "login", options_for="unknown", expect=PLAIN_REFUSAL,
             listed="as for another user's username: the challenge is bound to no one who owns the credential", server="refuse"),
        Case("client data", "type webauthn.create (step-up)", "verify", mutate=client(type="webauthn.create"), expect=WRONG_TYPE),
        Case("origin", "another port (step-up)", "verify", mutate=client(origin="http://localhost:1"), expect=ORIGIN_REFUSED),
    ]
    stateless = ("py_webauthn is given the credential's key by its caller and keeps no credential records: finding the credential "
                 "and its owner is the RP's (L3 §7.2 steps 5-6)")
    cases += [
        Case("credential", "another user's user handle", "login", mutate=lambda p, o: setattr(p, "user_handle", o.stranger().handle),
             listed="L3 §7.2 step 6: response.userHandle must be the credential owner's handle; " + stateless, server="refuse",
             expect=PLAIN_REFUSAL),
        Case("credential", "unknown credential id", "login", mutate=lambda p, o: setattr(p, "json_id", b64url(secrets.token_bytes(32))),
             listed=stateless, server="refuse", expect=PLAIN_REFUSAL),
        Case("credential", "a revoked passkey", "login", credential=("revoked", 0), listed=stateless, server="refuse", expect=PLAIN_REFUSAL),
        Case("credential", "another user's passkey at step-up", "verify", as_stranger=True,
             listed="L3 §7.2 step 5: the credential must be one of allowCredentials (the session user's); " + stateless,
             server="refuse", expect=PLAIN_REFUSAL),
        Case("credential", "id and rawId differ", "login", mutate=lambda p, o: setattr(p, "json_raw_id", b64url(secrets.token_bytes(32)))),
        Case("trailing bytes", "after the authenticator data", "login", mutate=knobs(auth_tail=b"\x00"), expect=REFUSED_MALFORMED),
        Case("trailing bytes", "authenticator data of 36 bytes", "login",
             mutate=lambda p, o: setattr(p, "auth_bytes", p.rp_id_hash + bytes([p.flags]) + b"\x00\x00\x01"), expect=REFUSED_MALFORMED),
    ]
    return cases


# MARK: running them

@dataclass
class Credential:
    """A passkey registered on the server, as this authenticator and the oracle remember it."""
    key: Key
    credential_id: bytes
    cose_bytes: bytes
    owner: Account
    handle: bytes
    passkey_id: str
    count: int
    flags: int = 0


@dataclass
class Result:
    case: Case
    request: dict
    answer: dict
    server_ok: bool
    py_ok: bool
    py_why: str
    fido_ok: bool
    fido_why: str
    verdict: str = ""      # agree, listed, rp-choice, DISAGREE, MISBEHAVED
    problem: str = ""


class Oracle:
    def __init__(self, identity, origin):
        self.identity = identity
        self.origin = origin
        self.attestor = Attestor()
        self.accounts = []
        self.credentials = {}
        self.registered_ids = []
        self.current = None
        self._stranger = None

    # accounts and their passkeys

    def account(self):
        """An account with room for another passkey (a user holds at most 10)."""
        if not self.accounts or self.accounts[-1].passkey_count >= 9:
            account = Account(self.identity, "pkoracle")
            account.passkey_count = 0
            account.handle = None
            self.accounts.append(account)
        return self.accounts[-1]

    def stranger(self):
        """Another user, with a session and a user handle."""
        if self._stranger is None:
            self._stranger = Account(self.identity, "pkstranger")
            self._stranger.handle = b64url_decode(self.register_options(self._stranger)["user"]["id"])
        return self._stranger

    def register_options(self, account):
        account.step_up()
        return self.identity.result("identity.passkey_register_options", {"session": account.session})

    def credential(self, spec, alg):
        """The credential a case needs: ("shared",), or a named fresh one (name, initial count[, flags])."""
        name, count, flags = (spec + (0, 0))[:3]
        if (name, alg) not in self.credentials:
            self.credentials[(name, alg)] = self.new_credential(alg, count, flags)
            if name == "revoked":
                stored = self.credentials[(name, alg)]
                stored.owner.step_up()
                self.identity.result("identity.revoke_passkey", {"session": stored.owner.session, "passkey_id": stored.passkey_id})
        return self.credentials[(name, alg)]

    def register_plain(self, account, alg=-7, count=0, flags=0):
        """(answer, parts) of one unmutated registration (attestation none) for `account`."""
        options = self.register_options(account)
        account.handle = b64url_decode(options["user"]["id"])
        parts = Registration(options["challenge"], self.origin, Key(alg), sign_count=count, flags=UP | UV | AT | flags)
        answer = self.identity.call("identity.passkey_register", {"session": account.session, "credential": build_registration(parts, self.attestor)})
        if "result" in answer:
            self.registered_ids.append(parts.credential_id)
        return answer, parts

    def new_credential(self, alg, count, flags):
        account = self.account()
        answer, parts = self.register_plain(account, alg, count, flags)
        if "result" not in answer:
            raise RuntimeError(f"could not register a credential to sign with: {answer}")
        account.passkey_count += 1
        return Credential(parts.key, parts.credential_id, cbor(parts.key.cose()), account, account.handle, answer["result"]["passkey_id"], count)

    def burned_challenge(self, parts):
        """A challenge of this very ceremony (and user) that a refused response used up."""
        if isinstance(parts, Registration):
            challenge = self.register_options(self.current)["challenge"]
            burner = Registration(challenge, self.origin, Key(-7), fmt_name="latchkey-burn")
            self.identity.call("identity.passkey_register",
                               {"session": self.current.session, "credential": build_registration(burner, self.attestor)})
        else:
            challenge = self.identity.result("identity.passkey_login_options", {})["challenge"]
            burner = Assertion(challenge, self.origin, parts.credential, json_id=b64url(secrets.token_bytes(32)))
            self.identity.call("identity.passkey_login", {"credential": build_assertion(burner), "device_id": "py-oracle"})
        return challenge

    def reuse_registered_id(self, parts):
        parts.credential_id = self.registered_ids[0]

    # challenges

    def other_challenge(self, kind, parts):
        if kind == "unknown":
            return b64url(secrets.token_bytes(32))
        if kind == "used":
            return self.burned_challenge(parts)
        if kind == "login":
            return self.identity.result("identity.passkey_login_options", {})["challenge"]
        if kind == "register":
            return self.register_options(self.account())["challenge"]
        if kind == "verify":
            return self.identity.result("identity.passkey_verify_options", {"session": self.credential(("shared",), -7).owner.session})["challenge"]
        if kind == "stranger-register":
            return self.register_options(self.stranger())["challenge"]
        if kind == "stranger-verify":
            return self.identity.result("identity.passkey_verify_options", {"session": self.stranger().session})["challenge"]
        raise ValueError(kind)

    def login_options_params(self, case, stored):
        usernames = {"": None, "owner": stored.owner.username, "stranger": self.stranger().username if case.options_for == "stranger" else None,
                     "unknown": "nobody" + secrets.token_hex(4)}
        name = usernames[case.options_for]
        return {"username": name} if name else {}

    # one case

    def run(self, case):
        if case.ceremony == "register":
            return self.run_registration(case)
        return self.run_assertion(case)

    def run_registration(self, case):
        account = self.current = self.account()
        options = self.register_options(account)
        account.handle = b64url_decode(options["user"]["id"])
        parts = Registration(options["challenge"], self.origin, Key(case.alg), fmt=case.fmt)
        case.mutate(parts, self)
        credential = build_registration(parts, self.attestor)
        request = {"session": account.session, "credential": credential}
        answer = self.identity.call("identity.passkey_register", request)
        result = Result(case, request, answer, "result" in answer,
                        *opinion(py_webauthn_register, credential, options["challenge"], self.origin),
                        *opinion(fido2_register, credential, options["challenge"], self.origin))
        if result.server_ok:
            account.passkey_count += 1
            self.registered_ids.append(parts.credential_id)
            self.check_listing(result, account, parts)
        return result

    def check_listing(self, result, account, parts):
        """identity.passkeys shows the new passkey as its registration said: attestation type, backup flags, AAGUID."""
        listed = self.identity.result("identity.passkeys", {"session": account.session})["passkeys"]
        entry = next((p for p in listed if p["passkey_id"] == result.answer["result"].get("passkey_id")), None)
        expected = {"attestation": {"none": "none", "packed": "self", "x5c": "basic"}[parts.fmt],
                    "backup_eligible": bool(parts.flags & BE), "backed_up": bool(parts.flags & BS), "aaguid": str(Aaguid(parts.aaguid))}
        shown = {name: entry.get(name) for name in expected} if entry else None
        if shown != expected:
            result.problem = f"identity.passkeys shows {shown}, the registration said {expected}"

    def run_assertion(self, case):
        stored = self.credential(case.credential, case.alg)
        session = self.stranger().session if case.as_stranger else stored.owner.session
        if case.ceremony == "login":
            options = self.identity.result("identity.passkey_login_options", self.login_options_params(case, stored))
        else:
            options = self.identity.result("identity.passkey_verify_options", {"session": session})
        parts = Assertion(options["challenge"], self.origin, stored, session=session, sign_count=stored.count + 1,
                          flags=UP | UV | stored.flags)
        case.mutate(parts, self)
        credential = build_assertion(parts)
        if case.ceremony == "login":
            request = {"credential": credential, "device_id": "py-oracle"}
        else:
            request = {"session": parts.session, "credential": credential}
        answer = self.identity.call(CEREMONY_METHODS[case.ceremony], request)
        require_uv = case.ceremony == "verify"
        result = Result(case, request, answer, "result" in answer,
                        *opinion(py_webauthn_assert, credential, options["challenge"], self.origin, stored, require_uv),
                        *opinion(fido2_assert, credential, options["challenge"], self.origin, stored, require_uv))
        if result.server_ok:
            stored.count = parts.sign_count
            self.check_assurance(result, parts, case.ceremony)
        return result

    def check_assurance(self, result, parts, ceremony):
        """An accepted sign-in is aal 2 exactly when the authenticator verified the user; a step-up answers aal 2."""
        answered = result.answer["result"]
        if ceremony == "verify":
            if answered != {"aal": 2}:
                result.problem = f"an accepted step-up answered {answered}, not {{'aal': 2}}"
            return
        verified = bool(parts.flags & UV)
        if answered.get("aal") != (2 if verified else 1) or bool(answered.get("required_factors")) == verified:
            result.problem = (f"sign-in {'with' if verified else 'without'} UV answered aal {answered.get('aal')}, "
                              f"required_factors {answered.get('required_factors')}")


# DISAGREE: Latchkey and py_webauthn differ where no difference is listed. MISSED: a listed
# rule Latchkey does not apply. MISBEHAVED: the right verdict with the wrong reason, assurance
# level or listing.
FAILED = ("DISAGREE", "MISSED", "MISBEHAVED")


def judge(result):
    """Sets the verdict: agreement with py_webauthn, a listed difference held, or a problem."""
    case = result.case
    if not result.problem and not result.server_ok and case.expect and reason(result.answer) not in case.expect:
        result.problem = f"refused with {reason(result.answer)}, the contract's reason here is one of {list(case.expect)}"
    if case.rp_choice:
        result.verdict = "rp-choice"
    elif case.listed:
        held = result.server_ok == (case.server == "accept")
        result.verdict = ("listed" if result.server_ok != result.py_ok else "agree") if held else "MISSED"
        if not held:
            result.problem = result.problem or f"Latchkey must {case.server} here: {case.listed}"
    else:
        result.verdict = "agree" if result.server_ok == result.py_ok else "DISAGREE"
    if result.problem and result.verdict not in ("DISAGREE", "MISSED"):
        result.verdict = "MISBEHAVED"


# MARK: rules no single response shows

def single_use_race(oracle, checks, rounds=5):
    """One sign-in challenge in two assertions (two passkeys) sent at the same moment on two
    connections: exactly one is accepted, the other is invalid_token/used (L3 §13.4.3: a
    challenge is used once). py_webauthn, stateless, would take both."""
    credentials = [oracle.credential(("shared",), -7), oracle.credential(("shared",), -257)]
    clients = [Client(oracle.identity.where), Client(oracle.identity.where)]
    for round_ in range(1, rounds + 1):
        challenge = oracle.identity.result("identity.passkey_login_options", {})["challenge"]
        requests = [{"credential": build_assertion(Assertion(challenge, oracle.origin, stored, sign_count=stored.count + 1)), "device_id": "py-race"}
                    for stored in credentials]
        answers = [None, None]
        start = threading.Barrier(2)

        def send(index):
            start.wait(timeout=10)
            answers[index] = clients[index].call("identity.passkey_login", requests[index])
        threads = [threading.Thread(target=send, args=(index,)) for index in range(2)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=30)
        for stored, answer in zip(credentials, answers):
            if answer and "result" in answer:
                stored.count += 1
        outcomes = sorted("accepted" if answer and "result" in answer else str(reason(answer or {})) for answer in answers)
        checks.check(f"race {round_}: one challenge in two assertions at once: one accepted, the other invalid_token/used",
                     outcomes == ["('invalid_token', 'used')", "accepted"], answers)


def passkey_limit(oracle, checks):
    """A user holds at most 10 passkeys: the 11th registration is conflict/passkey_limit."""
    account = Account(oracle.identity, "pklimit")
    answers = [oracle.register_plain(account)[0] for _ in range(11)]
    checks.check("a user's first 10 passkeys are accepted", all("result" in answer for answer in answers[:10]),
                 [answer for answer in answers[:10] if "result" not in answer])
    checks.check("the 11th is refused (conflict/passkey_limit)", reason(answers[10]) == ("conflict", "passkey_limit"), answers[10])


def word(accepted):
    return "accepts" if accepted else "refuses"


def print_result_detail(result):
    case = result.case
    print(f"\n{result.verdict}: [{case.ceremony}] {case.group}: {case.name}")
    if result.problem:
        print(f"  problem: {result.problem}")
    print(f"  Latchkey {word(result.server_ok)}; py_webauthn {word(result.py_ok)}{': ' + result.py_why if result.py_why else ''}; "
          f"fido2 {word(result.fido_ok)}{': ' + result.fido_why if result.fido_why else ''}")
    if case.listed:
        print(f"  listed difference: {case.listed}")
    print(f"  request: {CEREMONY_METHODS[case.ceremony]} {json.dumps(result.request)}")
    print(f"  answer:  {json.dumps(result.answer)}")


def print_groups(results):
    """One line per (ceremony, group, verdict, outcomes): the per-case picture without 500 lines."""
    lines = {}
    for result in results:
        key = (result.case.ceremony, result.case.group, result.verdict, result.server_ok, result.py_ok)
        lines.setdefault(key, []).append(result)
    for (ceremony, group, verdict, server_ok, py_ok), members in lines.items():
        reasons = sorted({"/".join(str(part) for part in reason(r.answer) if part) or "-" for r in members if not r.server_ok})
        names = members[0].case.name if len(members) == 1 else f"{len(members)} cases"
        print(f"{verdict:10} {ceremony:8} {group:16} {names:60.60} Latchkey {word(server_ok)}, py_webauthn {word(py_ok)}"
              + (f" ({', '.join(reasons)})" if reasons else ""))


def main():
    if len(sys.argv) < 2:
        raise SystemExit(__doc__)
    with stack(sys.argv[1]) as running:
        oracle = Oracle(Client(running.identity), running.origin)
        results = []
        for case in registration_cases() + assertion_cases():
            try:
                result = oracle.run(case)
            except Exception as error:
                result = Result(case, {}, {"exception": traceback.format_exc(limit=3)}, False, False, "", False, "",
                                problem="the case could not run (server answer or harness error above)")
                if isinstance(error, (ConnectionError, OSError)):
                    oracle.identity.reconnect()
            judge(result)
            results.append(result)
        print_groups(results)
        extra = Checks()
        single_use_race(oracle, extra)
        passkey_limit(oracle, extra)
        for result in results:
            if result.verdict in FAILED:
                print_result_detail(result)
        listed = [r for r in results if r.verdict == "listed"]
        print("\nlisted differences by design (Latchkey applies a rule py_webauthn leaves to its caller):")
        for result in listed:
            print(f"  [{result.case.ceremony}] {result.case.group}: {result.case.name}: Latchkey {word(result.server_ok)} "
                  f"({'/'.join(str(p) for p in reason(result.answer) if p) or 'result'}), py_webauthn {word(result.py_ok)}. {result.case.listed}")
        print("left to the relying party (any answer passes):")
        for result in (r for r in results if r.verdict == "rp-choice"):
            print(f"  [{result.case.ceremony}] {result.case.group}: {result.case.name}: Latchkey {word(result.server_ok)}"
                  f" {reason(result.answer) if not result.server_ok else ''}, py_webauthn {word(result.py_ok)}. {result.case.rp_choice}")
        dissent = [r for r in results if r.fido_ok != r.server_ok and r.verdict not in ("rp-choice", "listed")]
        print(f"fido2 (third opinion) differs from Latchkey on {len(dissent)} cases:")
        for result in dissent:
            print(f"  [{result.case.ceremony}] {result.case.group}: {result.case.name}: fido2 {word(result.fido_ok)}"
                  f"{': ' + result.fido_why[:160] if result.fido_why else ''}")
        counts = {verdict: sum(1 for r in results if r.verdict == verdict) for verdict in ("agree", "listed", "rp-choice") + FAILED}
        print(f"passkey_oracle: {len(results)} cases, {counts['agree']} agreed, {counts['listed']} listed differences held, "
              f"{counts['rp-choice']} left to the RP; {counts['DISAGREE']} disagreed, {counts['MISSED']} missed a listed rule, "
              f"{counts['MISBEHAVED']} misbehaved; other checks: {len(extra.results) - len(extra.failed())} passed, {len(extra.failed())} failed")
        return 1 if any(counts[verdict] for verdict in FAILED) or extra.failed() else 0


if __name__ == "__main__":
    sys.exit(main())
