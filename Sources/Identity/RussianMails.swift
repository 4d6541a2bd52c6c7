import Delivery

/// Every account mail in Russian.
struct RussianMails: MailCatalog {
    /// Durations read in the nominative ("1 минута", "2 часа", "1 час и 15 минут"): the texts
    /// put them where that case is right ("срок её действия — 24 часа").
    func duration(seconds: Int64) -> String {
        DurationUnits.words(seconds: seconds) { value, unit in
            let name = switch unit {
            case .second: Self.plural(value, "секунда", "секунды", "секунд")
            case .minute: Self.plural(value, "минута", "минуты", "минут")
            case .hour: Self.plural(value, "час", "часа", "часов")
            case .day: Self.plural(value, "день", "дня", "дней")
            }
            return "\(value) \(name)"
        } joining: { "\($0) и \($1)" }
    }

    /// The Russian plural form for `n`: 1, 21 → `one`; 2–4, 22–24 → `few`; 0, 5–20, 25… → `many`.
    private static func plural(_ n: Int64, _ one: String, _ few: String, _ many: String) -> String {
        let lastDigit = n % 10
        let lastTwo = n % 100
        if lastDigit == 1 && lastTwo != 11 { return one }
        if (2...4).contains(lastDigit) && !(12...14).contains(lastTwo) { return few }
        return many
    }

    func linkLines(web: String, app: String) -> String {
        "\(web)\n\nИли на телефоне, где установлено приложение:\n\n\(app)"
    }

    func verifyAddress(product: String, link: String, validFor: String) -> MailWords {
        MailWords(subject: "Подтвердите адрес электронной почты для \(product)", text: """
            Здравствуйте!

            Пожалуйста, подтвердите, что это адрес электронной почты вашего аккаунта \(product):

            \(link)

            Ссылка одноразовая, срок её действия — \(validFor). На этот адрес будут приходить ссылки \
            для сброса пароля и уведомления о безопасности.

            Если вы не создавали аккаунт \(product), просто проигнорируйте это письмо.

            \(product)
            """, linkLabel: "Подтвердить адрес")
    }

    func registrationAttempt(product: String) -> MailWords {
        MailWords(subject: "Попытка регистрации в \(product) с вашим адресом", text: """
            Здравствуйте!

            Только что кто-то попытался создать аккаунт \(product) с этим адресом электронной почты, \
            но он уже привязан к аккаунту. Второй аккаунт не создан.

            Если это были вы, аккаунт у вас уже есть: войдите в него или, если забыли пароль, \
            сбросьте его в приложении. Если это были не вы, ничего делать не нужно.

            \(product)
            """)
    }

    func passwordChanged(product: String, device: String, at: String) -> MailWords {
        MailWords(subject: "Пароль \(product) изменён", text: """
            Здравствуйте!

            Пароль вашего аккаунта \(product) был изменён \(at) с устройства «\(device)». \
            На всех остальных устройствах выполнен выход из аккаунта.

            Если это были вы, ничего делать не нужно. Если нет, немедленно сбросьте пароль \
            в приложении и свяжитесь с нами.

            \(product)
            """)
    }

    func newDeviceSignIn(product: String, device: String, client: String?, at: String) -> MailWords {
        let place = client.map { " с IP-адреса \($0)" } ?? ""
        return MailWords(subject: "\(product): вход с нового устройства", text: """
            Здравствуйте!

            В ваш аккаунт \(product) выполнен вход с использованием пароля и второго фактора \
            на устройстве «\(device)»\(place). Время входа: \(at).

            Если это были вы, ничего делать не нужно. Если нет, завершите сеанс этого устройства \
            в приложении (Безопасность > Сеансы), сбросьте пароль и свяжитесь с нами.

            \(product)
            """)
    }

    func phoneChanged(product: String, lastDigits: String, device: String, at: String, coolingOff: String?) -> MailWords {
        let hold = coolingOff.map {
            " В целях безопасности переводы теперь подтверждаются только с помощью Face ID / Touch ID, "
                + "а не по SMS; срок этого ограничения — \($0)."
        } ?? ""
        return MailWords(subject: "\(product): номер телефона изменён", text: """
            Здравствуйте!

            Номер телефона вашего аккаунта \(product) был изменён \(at) с устройства «\(device)». \
            Новый номер оканчивается на \(lastDigits).\(hold)

            Если это были не вы, значит, кто-то знает ваш пароль и имеет доступ ко второму фактору: \
            немедленно сбросьте пароль и свяжитесь с нами.

            \(product)
            """)
    }

    func confirmAddressChange(product: String, link: String, validFor: String) -> MailWords {
        MailWords(subject: "Подтвердите новый адрес электронной почты для \(product)", text: """
            Здравствуйте!

            Поступил запрос сделать этот адрес адресом электронной почты аккаунта \(product). \
            Чтобы подтвердить изменение, перейдите по ссылке:

            \(link)

            Ссылка одноразовая, срок её действия — \(validFor). Пока ссылка не использована, \
            за аккаунтом остаётся прежний адрес.

            Если вы не отправляли такой запрос, просто проигнорируйте это письмо: ничего не изменится.

            \(product)
            """, linkLabel: "Использовать этот адрес")
    }

    func addressInUse(product: String) -> MailWords {
        MailWords(subject: "Ваш адрес электронной почты и \(product)", text: """
            Здравствуйте!

            Из аккаунта \(product) поступил запрос сделать этот адрес его адресом электронной почты, \
            но он уже привязан к другому аккаунту (возможно, к вашему). Ничего не изменилось.

            Если вы не отправляли такой запрос, ничего делать не нужно.

            \(product)
            """)
    }

    func addressChangeRefused(product: String, maskedNewAddress: String) -> MailWords {
        MailWords(subject: "\(product): смена адреса электронной почты отклонена", text: """
            Здравствуйте!

            Из вашего аккаунта \(product) поступил запрос заменить его адрес электронной почты \
            на \(maskedNewAddress), но этот адрес привязан к другому аккаунту. Ничего не изменилось.

            Если это были не вы, значит, кто-то знает ваш пароль и имеет доступ ко второму фактору: \
            немедленно сбросьте пароль и свяжитесь с нами.

            \(product)
            """)
    }

    func addressChangeRequested(product: String, maskedNewAddress: String, link: String, validFor: String) -> MailWords {
        MailWords(subject: "\(product): запрошена смена адреса электронной почты", text: """
            Здравствуйте!

            Из вашего аккаунта \(product) поступил запрос заменить его адрес электронной почты \
            на \(maskedNewAddress). Изменение вступит в силу, когда новый адрес будет подтверждён.

            Если это были не вы, перейдите по ссылке: она сохранит (или вернёт) этот адрес и завершит \
            сеансы на всех устройствах.

            \(link)

            Ссылка одноразовая, срок её действия — \(validFor). После перехода по ней сбросьте пароль.

            \(product)
            """, linkLabel: "Это не я")
    }

    func addressRestored(product: String) -> MailWords {
        MailWords(subject: "\(product): адрес электронной почты восстановлен", text: """
            Здравствуйте!

            К вашему аккаунту \(product) снова привязан этот адрес электронной почты, а на всех \
            устройствах выполнен выход из него. Тот, кто изменил адрес, может знать ваш пароль: \
            сбросьте его прямо сейчас в приложении, а затем заново настройте вход по биометрии.

            \(product)
            """)
    }

    func accountDeleted(product: String) -> MailWords {
        MailWords(subject: "Ваш аккаунт \(product) удалён", text: """
            Здравствуйте!

            Ваш аккаунт \(product) удалён по вашему запросу из приложения. Ваши данные \
            для входа, устройства, факторы аутентификации и персональные данные стёрты; записи \
            о прошлых платежах, которые мы по закону обязаны сохранять, хранятся под анонимным \
            номером, отдельно от любых сведений, позволяющих вас идентифицировать.

            Это последнее письмо, которое вы от нас получите. Если вы не запрашивали удаление, \
            свяжитесь с нами.

            \(product)
            """)
    }

    func recoveryCodeUsed(product: String, remaining: Int) -> MailWords {
        let count = Int64(remaining)
        let left = remaining == 0
            ? "Кодов восстановления у вас больше не осталось."
            : "У вас \(Self.plural(count, "остался", "осталось", "осталось")) \(remaining) "
                + "\(Self.plural(count, "код", "кода", "кодов")) восстановления."
        let advice = remaining <= 2
            ? "Создайте в ближайшее время новый набор в приложении (Безопасность > Коды восстановления): "
                + "новый набор заменит прежний."
            : "Каждый код действует только один раз; храните оставшиеся коды в надёжном месте."
        return MailWords(subject: "\(product): использован код восстановления", text: """
            Здравствуйте!

            Для входа в ваш аккаунт \(product) только что был использован один из кодов \
            восстановления. \(left) \(advice)

            Если это были не вы, немедленно смените пароль в приложении и свяжитесь с нами.

            \(product)
            """)
    }

    func factorChanged(product: String, change: FactorChange, device: String?, at: String) -> MailWords {
        let (summary, sentence): (String, String) = switch change {
        case .authenticatorAdded:
            ("подключено приложение-аутентификатор", "подключено приложение-аутентификатор в качестве второго фактора")
        case .authenticatorRemoved: ("отключено приложение-аутентификатор", "отключено приложение-аутентификатор")
        case .recoveryCodesGenerated:
            ("созданы новые коды восстановления", "создан новый набор кодов восстановления (прежние коды больше не действуют)")
        case .deviceKeyAdded(let protection):
            ("добавлен ключ устройства", protection == "biometry"
                ? "добавлен ключ устройства для входа по Face ID / Touch ID"
                : "добавлен ключ устройства (допускается подтверждение код-паролем)")
        case .deviceKeyRemoved: ("удалён ключ устройства", "удалён ключ устройства")
        case .phoneProven: ("подтверждён номер телефона", "подтверждён ваш номер телефона в качестве второго фактора")
        }
        let place = device.map { " с устройства «\($0)»" } ?? ""
        return MailWords(subject: "\(product): \(summary)", text: """
            Здравствуйте!

            В вашем аккаунте \(product) \(sentence). Это произошло \(at)\(place).

            Если это были вы, ничего делать не нужно. Если нет, значит, кто-то знает ваш пароль \
            и имеет доступ к одному из ваших вторых факторов: немедленно сбросьте пароль (при сбросе \
            также удаляются факторы, подключённые за последние дни) и свяжитесь с нами.

            \(product)
            """)
    }
}
