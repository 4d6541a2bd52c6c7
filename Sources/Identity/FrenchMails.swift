import Delivery

/// Every account mail in French.
struct FrenchMails: MailCatalog {
    func duration(seconds: Int64) -> String { MailLocale.french.duration(seconds: seconds) }

    func linkLines(web: String, app: String) -> String {
        "\(web)\n\nOu, sur le téléphone où l'application est installée :\n\n\(app)"
    }

    func verifyAddress(product: String, link: String, validFor: String) -> MailWords {
        MailWords(subject: "Confirmez votre adresse e-mail \(product)", text: """
            Bonjour,

            Veuillez confirmer qu'il s'agit bien de l'adresse de votre compte \(product) :

            \(link)

            Ce lien n'est utilisable qu'une seule fois et expire dans \(validFor). Les liens de \
            réinitialisation du mot de passe et les alertes de sécurité sont envoyés à cette adresse.

            Si vous n'avez pas créé de compte \(product), ignorez cet e-mail.

            \(product)
            """, linkLabel: "Confirmer cette adresse")
    }

    func registrationAttempt(product: String) -> MailWords {
        MailWords(subject: "Quelqu'un a tenté de s'inscrire à \(product) avec votre adresse", text: """
            Bonjour,

            Quelqu'un vient de tenter de créer un compte \(product) avec cette adresse e-mail, qui \
            est déjà associée à un compte. Aucun second compte n'a été créé.

            Si c'était vous, vous avez déjà un compte : connectez-vous, ou réinitialisez votre mot \
            de passe depuis l'application si vous l'avez oublié. Si ce n'était pas vous, vous n'avez \
            rien à faire.

            \(product)
            """)
    }

    func passwordChanged(product: String, device: String, at: String) -> MailWords {
        MailWords(subject: "Le mot de passe de votre compte \(product) a été modifié", text: """
            Bonjour,

            Le mot de passe de votre compte \(product) a été modifié depuis l'appareil « \(device) » \
            le \(at). Tous les autres appareils ont été déconnectés.

            Si c'était vous, vous n'avez rien à faire. Sinon, réinitialisez immédiatement votre mot \
            de passe depuis l'application et contactez-nous.

            \(product)
            """)
    }

    func newDeviceSignIn(product: String, device: String, client: String?, at: String) -> MailWords {
        let place = client.map { " depuis l'adresse \($0)" } ?? ""
        return MailWords(subject: "\(product) : connexion depuis un nouvel appareil", text: """
            Bonjour,

            Une connexion à votre compte \(product) a eu lieu sur l'appareil « \(device) »\(place) \
            le \(at), avec votre mot de passe et un second facteur.

            Si c'était vous, vous n'avez rien à faire. Sinon, déconnectez cet appareil dans \
            l'application (Sécurité > Sessions), réinitialisez votre mot de passe et contactez-nous.

            \(product)
            """)
    }

    func phoneChanged(product: String, lastDigits: String, device: String, at: String, coolingOff: String?) -> MailWords {
        let hold = coolingOff.map {
            " Pendant \($0) à compter de ce changement, les virements ne peuvent être confirmés que par Face ID / Touch ID, "
                + "et non par SMS."
        } ?? ""
        return MailWords(subject: "\(product) : votre numéro de téléphone a été modifié", text: """
            Bonjour,

            Le numéro de téléphone de votre compte \(product) a été remplacé par un numéro se \
            terminant par \(lastDigits), depuis l'appareil « \(device) » le \(at).\(hold)

            Si vous n'êtes pas à l'origine de ce changement, quelqu'un dispose de votre mot de passe \
            et d'un second facteur : réinitialisez immédiatement votre mot de passe et contactez-nous.

            \(product)
            """)
    }

    func confirmAddressChange(product: String, link: String, validFor: String) -> MailWords {
        MailWords(subject: "Confirmez votre nouvelle adresse e-mail \(product)", text: """
            Bonjour,

            Quelqu'un a demandé que cette adresse devienne l'adresse e-mail d'un compte \(product). \
            Pour confirmer ce changement, ouvrez ce lien :

            \(link)

            Ce lien n'est utilisable qu'une seule fois et expire dans \(validFor). Tant qu'il n'a \
            pas été utilisé, le compte conserve son ancienne adresse.

            Si vous n'êtes pas à l'origine de cette demande, ignorez cet e-mail : rien ne sera modifié.

            \(product)
            """, linkLabel: "Utiliser cette adresse")
    }

    func addressInUse(product: String) -> MailWords {
        MailWords(subject: "Votre adresse e-mail et \(product)", text: """
            Bonjour,

            Une personne connectée à un compte \(product) a demandé que cette adresse devienne \
            l'adresse e-mail de ce compte, mais elle appartient déjà à un autre compte (peut-être \
            le vôtre). Rien n'a été modifié.

            Si vous n'êtes pas à l'origine de cette demande, vous n'avez rien à faire.

            \(product)
            """)
    }

    func addressChangeRefused(product: String, maskedNewAddress: String) -> MailWords {
        MailWords(subject: "\(product) : une modification de votre adresse e-mail a été refusée", text: """
            Bonjour,

            Une personne connectée à votre compte \(product) a demandé de remplacer l'adresse \
            e-mail du compte par \(maskedNewAddress), qui appartient à un autre compte. Rien n'a été modifié.

            Si vous n'êtes pas à l'origine de cette demande, quelqu'un dispose de votre mot de passe \
            et d'un second facteur : réinitialisez immédiatement votre mot de passe et contactez-nous.

            \(product)
            """)
    }

    func addressChangeRequested(product: String, maskedNewAddress: String, link: String, validFor: String) -> MailWords {
        MailWords(subject: "\(product) : votre adresse e-mail est en cours de modification", text: """
            Bonjour,

            Une personne connectée à votre compte \(product) a demandé de remplacer l'adresse \
            e-mail du compte par \(maskedNewAddress). Le changement prendra effet dès que la nouvelle adresse \
            aura été confirmée.

            Si vous n'êtes pas à l'origine de cette demande, ouvrez ce lien : il conserve (ou \
            rétablit) cette adresse et déconnecte tous les appareils.

            \(link)

            Ce lien n'est utilisable qu'une seule fois, pendant \(validFor). Réinitialisez ensuite \
            votre mot de passe.

            \(product)
            """, linkLabel: "Ce n'était pas moi")
    }

    func addressRestored(product: String) -> MailWords {
        MailWords(subject: "\(product) : votre adresse e-mail a été rétablie", text: """
            Bonjour,

            Votre compte \(product) est de nouveau associé à cette adresse e-mail, et tous les \
            appareils ont été déconnectés. La personne qui l'avait modifiée connaît peut-être votre \
            mot de passe : réinitialisez-le dès maintenant depuis l'application, puis réactivez la \
            connexion biométrique.

            \(product)
            """)
    }

    func accountDeleted(product: String) -> MailWords {
        MailWords(subject: "Votre compte \(product) a été supprimé", text: """
            Bonjour,

            Votre compte \(product) a été supprimé, comme vous l'avez demandé depuis l'application. \
            Vos identifiants de connexion, vos appareils, vos facteurs d'authentification et vos \
            données personnelles ont été effacés ; les enregistrements des paiements passés que la \
            loi nous oblige à conserver sont gardés sous un numéro anonyme, séparés de toute \
            information permettant de vous identifier.

            Ceci est le dernier e-mail que vous recevrez de notre part. Si vous n'êtes pas à \
            l'origine de cette demande, contactez-nous.

            \(product)
            """)
    }

    func recoveryCodeUsed(product: String, remaining: Int) -> MailWords {
        let left = switch remaining {
        case ...0: "Il ne vous reste plus aucun code de secours."
        case 1: "1 code de secours reste disponible."
        default: "\(remaining) codes de secours restent disponibles."
        }
        let advice = remaining <= 2
            ? "Générez bientôt une nouvelle série dans l'application (Sécurité > Codes de secours) : elle remplacera l'ancienne."
            : "Chaque code ne fonctionne qu'une seule fois ; conservez les autres en lieu sûr."
        return MailWords(subject: "Un code de secours \(product) a été utilisé", text: """
            Bonjour,

            L'un de vos codes de secours \(product) vient d'être utilisé pour vous connecter. \
            \(left) \(advice)

            Si vous n'êtes pas à l'origine de cette connexion, changez immédiatement votre mot de \
            passe depuis l'application et contactez-nous.

            \(product)
            """)
    }

    func factorChanged(product: String, change: FactorChange, device: String?, at: String) -> MailWords {
        let (summary, sentence): (String, String) = switch change {
        case .authenticatorAdded:
            ("une application d'authentification a été configurée",
             "Une application d'authentification a été configurée comme second facteur")
        case .authenticatorRemoved:
            ("une application d'authentification a été supprimée", "L'application d'authentification a été supprimée")
        case .recoveryCodesGenerated:
            ("de nouveaux codes de secours ont été générés",
             "Une nouvelle série de codes de secours a été générée (les anciens codes ne fonctionnent plus)")
        case .deviceKeyAdded(let protection):
            ("une clé d'appareil a été ajoutée", protection == "biometry"
                ? "Une clé d'appareil pour la connexion par Face ID / Touch ID a été ajoutée"
                : "Une clé d'appareil (code de déverrouillage accepté) a été ajoutée")
        case .deviceKeyRemoved: ("une clé d'appareil a été supprimée", "Une clé d'appareil a été supprimée")
        case .passkeyAdded(let name): ("une clé d'accès a été ajoutée", "Une clé d'accès (« \(name) ») a été ajoutée pour la connexion")
        case .passkeyRemoved: ("une clé d'accès a été supprimée", "Une clé d'accès a été supprimée")
        case .phoneProven:
            ("votre numéro de téléphone a été confirmé", "Votre numéro de téléphone a été confirmé comme second facteur")
        }
        let place = device.map { " depuis l'appareil « \($0) »" } ?? ""
        return MailWords(subject: "\(product) : \(summary)", text: """
            Bonjour,

            \(sentence) sur votre compte \(product)\(place) le \(at).

            Si c'était vous, vous n'avez rien à faire. Sinon, quelqu'un dispose de votre mot de passe \
            et de l'un de vos seconds facteurs : réinitialisez immédiatement votre mot de passe (une \
            réinitialisation supprime aussi les facteurs configurés ces derniers jours) et \
            contactez-nous.

            \(product)
            """)
    }
}
