import Foundation

/// Small cards in the shapes real clients write, so the suite means something without
/// the shared corpus. Written with `\n` and turned into CRLF by `crlf`.
enum ClientShapes {
    static func crlf(_ text: String) -> [UInt8] {
        Array(text.replacingOccurrences(of: "\n", with: "\r\n").utf8)
    }

    /// iOS: itemN groups with X-ABLabel, TYPE lists, a base64 photo, year-less birthday.
    static let appleV3 = """
        BEGIN:VCARD
        VERSION:3.0
        PRODID:-//Apple Inc.//iPhone OS 17.4//EN
        N:Lindqvist;Maja;;;
        FN:Maja Lindqvist
        ORG:Nordljus Design AB;Product;
        item1.EMAIL;type=INTERNET;type=pref:maja@nordljus.example
        item1.X-ABLabel:_$!<Work>!$_
        TEL;type=CELL;type=VOICE;type=pref:+46 70 123 45 67
        TEL;type=IPHONE;type=CELL;type=VOICE:+46 70 765 43 21
        TEL;type=MAIN:+46 8 555 000 00
        TEL;type=HOME;type=FAX:+46 8 123 456 79
        TEL;type=PAGER:+46 74 000 11 22
        item4.TEL:+46 8 999 888 77
        item4.X-ABLabel:_$!<Other>!$_
        item5.TEL:+46 70 555 12 12
        item5.X-ABLabel:Gym
        item6.ADR;type=HOME;type=pref:;;Sveavägen 12;Stockholm;;113 50;Sweden
        item6.X-ABADR:se
        item8.URL;type=pref:https://nordljus.example
        item8.X-ABLabel:_$!<HomePage>!$_
        BDAY;X-APPLE-OMIT-YEAR=1604:1604-03-15
        item10.X-ABDATE;type=pref:2014-08-16
        item10.X-ABLabel:_$!<Anniversary>!$_
        item11.X-ABDATE:2019-03-01
        item11.X-ABLabel:Started at Nordljus
        item12.X-ABRELATEDNAMES;type=pref:Jonas Lindqvist
        item12.X-ABLabel:_$!<Spouse>!$_
        item13.X-ABRELATEDNAMES:Astrid
        item13.X-ABLabel:_$!<Mother>!$_
        X-SOCIALPROFILE;type=twitter;x-user=majalq:http://twitter.com/majalq
        IMPP;X-SERVICE-TYPE=Skype;type=HOME;type=pref:skype:maja.lindqvist
        PHOTO;ENCODING=b;TYPE=JPEG:/9j/4AAQSkZJRgABAQAAAQABAAD/2wBDAAMCAgICAgMCAgIDAwMDBAYEBAQEBAgGBgUGCQgKCgkICQkKDA8MCgsOCwkJDRENDg8QEBEQCgwSExIQEw8QEBD/
        UID:2A7B9C1D-3E4F-4A5B-8C6D-7E8F9A0B1C23
        END:VCARD

        """

    /// Apple group card (3.0).
    static let appleGroupV3 = """
        BEGIN:VCARD
        VERSION:3.0
        N:Book club
        FN:Book club
        X-ADDRESSBOOKSERVER-KIND:group
        X-ADDRESSBOOKSERVER-MEMBER:urn:uuid:11111111-2222-3333-4444-555555555555
        X-ADDRESSBOOKSERVER-MEMBER:urn:uuid:66666666-7777-8888-9999-000000000000
        UID:group-1
        END:VCARD

        """

    /// DAVx5 on a 4.0 server.
    static let davx5V4 = """
        BEGIN:VCARD
        VERSION:4.0
        UID:3a9e5c71-d2b4-4f86-a0c1-e7f9b3d5a2c8
        PRODID:+//IDN bitfire.at//DAVx5/4.4.2-ose ez-vcard/0.12.1
        FN:Lucía Fernández
        N:Fernández;Lucía;;;
        TEL;TYPE=cell;PREF=1:+34 612 345 678
        TEL;TYPE=work:+34 91 123 45 67
        item1.TEL:+34 91 765 43 21
        item1.X-ABLabel:Abuela
        EMAIL;TYPE=home;PREF=1:lucia@correo.example
        ADR;TYPE=home;LABEL="Calle de Alcalá 45, 3º B\\nMadrid":;;Calle de Alcalá 45\\, 3º B;Madrid;;28014;España
        BDAY:--0416
        ANNIVERSARY:20150912
        RELATED;TYPE=spouse;VALUE=text:Diego
        KIND:individual
        PHOTO:data:image/png;base64,iVBORw0KGgo=
        REV:20240105T101010Z
        END:VCARD

        """

    /// DAVx5 group on 4.0.
    static let groupV4 = """
        BEGIN:VCARD
        VERSION:4.0
        UID:urn:uuid:aaaa
        FN:Hiking
        KIND:group
        MEMBER:urn:uuid:bbbb
        MEMBER:urn:uuid:cccc
        END:VCARD

        """

    /// Evolution: LABEL properties, quoted list parameter, X- parameters.
    static let evolutionV3 = """
        BEGIN:VCARD
        VERSION:3.0
        UID:pas-id-65F1A2B300000001
        X-EVOLUTION-FILE-AS:Moreau\\, Camille
        FN:Camille Moreau
        N:Moreau;Camille;;;
        TEL;X-EVOLUTION-E164=612345678,"+33";TYPE=CELL;X-EVOLUTION-UI-SLOT=1:+33 6 12 34 56 78
        TEL;TYPE=WORK;TYPE=FAX:+33 1 42 00 11 23
        ADR;TYPE=WORK:;;12 rue des Archives;Paris;;75004;France
        LABEL;TYPE=WORK:12 rue des Archives\\n75004 Paris\\nFrance
        ADR;TYPE=HOME:;;3 impasse des Lilas;Montreuil;;93100;France
        CATEGORIES:Business,VIP
        END:VCARD

        """

    /// Outlook 2.1: QUOTED-PRINTABLE with a soft break inside a UTF-8 character, bare tokens.
    static let outlook21 = """
        BEGIN:VCARD
        VERSION:2.1
        N;LANGUAGE=en-us;CHARSET=utf-8;ENCODING=QUOTED-PRINTABLE:O'Connell;Siobh=C3=
        =A1n;;Ms.;
        FN;CHARSET=utf-8;ENCODING=QUOTED-PRINTABLE:Siobh=C3=A1n O'Connell
        NOTE;CHARSET=utf-8;ENCODING=QUOTED-PRINTABLE:Call before 10am.=0D=0AGate co=
        de 4411 =E2=80=93 ask for the bay; side door.
        TEL;WORK;VOICE:+353 1 555 0101
        TEL;CELL;PREF:+353 87 555 0103
        TEL;WORK;FAX:+353 1 555 0104
        ADR;WORK;PREF:;;Unit 4, North Wall Quay;Dublin;;D01 K8N2;Ireland
        LABEL;WORK;PREF;ENCODING=QUOTED-PRINTABLE:Unit 4, North Wall Quay=0D=0A=
        Dublin
        EMAIL;PREF;INTERNET:siobhan@harbour.example
        BDAY:19840719
        PHOTO;ENCODING=BASE64;JPEG:/9j/4AAQSkZJRgABAQAAAQABAAD
         /2wBDAAMCAgICAgMC

        END:VCARD

        """
}
