# Writes the CSV fixtures from the headers Google and Outlook exports use (run from this folder).
# Each file is in the encoding its exporter writes: Google UTF-8 (with and without BOM),
# Outlook "Unicode" UTF-16 LE with BOM, German Outlook in Windows-1252.
import csv, io, os
os.chdir(os.path.dirname(os.path.abspath(__file__)))
def write(name, header, rows, encoding, bom=b'', delimiter=','):
    out = io.StringIO()
    w = csv.writer(out, delimiter=delimiter, lineterminator='\r\n')
    w.writerow(header)
    for r in rows:
        w.writerow([r.get(h, '') for h in header])
    open(name, 'wb').write(bom + out.getvalue().encode(encoding))

legacy = ("Name,Given Name,Additional Name,Family Name,Yomi Name,Given Name Yomi,Additional Name Yomi,Family Name Yomi,"
  "Name Prefix,Name Suffix,Initials,Nickname,Short Name,Maiden Name,Birthday,Gender,Location,Billing Information,"
  "Directory Server,Mileage,Occupation,Hobby,Sensitivity,Priority,Subject,Notes,Language,Photo,Group Membership,"
  "E-mail 1 - Type,E-mail 1 - Value,E-mail 2 - Type,E-mail 2 - Value,Phone 1 - Type,Phone 1 - Value,Phone 2 - Type,Phone 2 - Value,"
  "Phone 3 - Type,Phone 3 - Value,Address 1 - Type,Address 1 - Formatted,Address 1 - Street,Address 1 - City,Address 1 - PO Box,"
  "Address 1 - Region,Address 1 - Postal Code,Address 1 - Country,Address 1 - Extended Address,Organization 1 - Type,"
  "Organization 1 - Name,Organization 1 - Yomi Name,Organization 1 - Title,Organization 1 - Department,Organization 1 - Symbol,"
  "Organization 1 - Location,Organization 1 - Job Description,Relation 1 - Type,Relation 1 - Value,Website 1 - Type,Website 1 - Value,"
  "Event 1 - Type,Event 1 - Value").split(',')
write('google-legacy-en.csv', legacy, [
  {"Name": "Ada Lovelace", "Given Name": "Ada", "Family Name": "Lovelace", "Name Prefix": "Countess", "Nickname": "Enchantress",
   "Birthday": "1815-12-10", "Notes": 'Wrote "the first program",\nwith Babbage.', "Group Membership": "* myContacts ::: Friends ::: Math",
   "E-mail 1 - Type": "* Home", "E-mail 1 - Value": "ada@example.org ::: ada.lovelace@example.org", "E-mail 2 - Type": "Work", "E-mail 2 - Value": "ada@engine.example",
   "Phone 1 - Type": "Mobile", "Phone 1 - Value": "+44 20 7946 0001", "Phone 2 - Type": "Home Fax", "Phone 2 - Value": "+44 20 7946 0002",
   "Phone 3 - Type": "Boat", "Phone 3 - Value": "+44 20 7946 0003",
   "Address 1 - Type": "Home", "Address 1 - Formatted": "12 St James's Square\nLondon SW1Y 4JH\nUnited Kingdom", "Address 1 - Street": "12 St James's Square",
   "Address 1 - City": "London", "Address 1 - Postal Code": "SW1Y 4JH", "Address 1 - Country": "United Kingdom",
   "Organization 1 - Name": "Analytical Engine Ltd", "Organization 1 - Title": "Programmer", "Organization 1 - Department": "Notes, Translations",
   "Relation 1 - Type": "Spouse", "Relation 1 - Value": "William King", "Website 1 - Type": "Home Page", "Website 1 - Value": "https://ada.example.org/",
   "Event 1 - Type": "Anniversary", "Event 1 - Value": "1835-07-08"},
  {"Name": "Grace Hopper", "Given Name": "Grace", "Family Name": "Hopper", "Birthday": "--12-09",
   "Phone 1 - Type": "Work", "Phone 1 - Value": "+1 202 555 0100"},
], 'utf-8')

new = ("First Name,Middle Name,Last Name,Phonetic First Name,Phonetic Middle Name,Phonetic Last Name,Name Prefix,Name Suffix,"
  "Nickname,File As,Organization Name,Organization Title,Organization Department,Birthday,Notes,Photo,Labels,"
  "E-mail 1 - Label,E-mail 1 - Value,Phone 1 - Label,Phone 1 - Value,Phone 2 - Label,Phone 2 - Value,Address 1 - Label,"
  "Address 1 - Formatted,Address 1 - Street,Address 1 - City,Address 1 - PO Box,Address 1 - Region,Address 1 - Postal Code,"
  "Address 1 - Country,Address 1 - Extended Address,Website 1 - Label,Website 1 - Value").split(',')
write('google-en-bom.csv', new, [
  {"First Name": "Søren", "Middle Name": "Aabye", "Last Name": "Kierkegaard", "Organization Name": "Universitetet", "Organization Title": "Magister",
   "Birthday": "1813-05-05", "Labels": "Philosophers ::: * myContacts ::: * starred", "E-mail 1 - Label": "Other", "E-mail 1 - Value": "soren@example.dk",
   "Phone 1 - Label": "Main", "Phone 1 - Value": "+45 33 12 34 56", "Phone 2 - Label": "Pager", "Phone 2 - Value": "+45 33 12 34 57",
   "Address 1 - Label": "Work", "Address 1 - Street": "Nytorv 2", "Address 1 - City": "København", "Address 1 - Postal Code": "1450",
   "Address 1 - Country": "Denmark", "Address 1 - PO Box": "PO 7", "Website 1 - Label": "Blog", "Website 1 - Value": "https://soren.example.dk/"},
], 'utf-8', bom=b'\xef\xbb\xbf')

german_google = ("Vorname,Zweiter Vorname,Nachname,Namenspräfix,Namenssuffix,Spitzname,Organisationsname,Titel in der Organisation,"
  "Geburtstag,Notizen,Labels,E-Mail 1 - Label,E-Mail 1 - Wert,Telefon 1 - Label,Telefon 1 - Wert,Adresse 1 - Label,Adresse 1 - Straße,"
  "Adresse 1 - Stadt,Adresse 1 - Postleitzahl,Adresse 1 - Land").split(',')
write('google-de.csv', german_google, [
  {"Vorname": "Jürgen", "Nachname": "Groß", "Geburtstag": "1970-03-01", "Labels": "Familie", "E-Mail 1 - Label": "Privat",
   "E-Mail 1 - Wert": "juergen@example.de", "Telefon 1 - Label": "Mobil", "Telefon 1 - Wert": "+49 170 1234567",
   "Adresse 1 - Label": "Privat", "Adresse 1 - Straße": "Hauptstraße 5", "Adresse 1 - Stadt": "München",
   "Adresse 1 - Postleitzahl": "80331", "Adresse 1 - Land": "Deutschland"},
], 'utf-8')

outlook_en = ["Title","First Name","Middle Name","Last Name","Suffix","Company","Department","Job Title","Business Street","Business Street 2","Business Street 3","Business City","Business State","Business Postal Code","Business Country/Region","Home Street","Home Street 2","Home Street 3","Home City","Home State","Home Postal Code","Home Country/Region","Other Street","Other Street 2","Other Street 3","Other City","Other State","Other Postal Code","Other Country/Region","Assistant's Phone","Business Fax","Business Phone","Business Phone 2","Callback","Car Phone","Company Main Phone","Home Fax","Home Phone","Home Phone 2","ISDN","Mobile Phone","Other Fax","Other Phone","Pager","Primary Phone","Radio Phone","TTY/TDD Phone","Telex","Account","Anniversary","Assistant's Name","Billing Information","Birthday","Business Address PO Box","Categories","Children","Directory Server","E-mail Address","E-mail Type","E-mail Display Name","E-mail 2 Address","E-mail 2 Type","E-mail 2 Display Name","E-mail 3 Address","E-mail 3 Type","E-mail 3 Display Name","Gender","Government ID Number","Hobby","Home Address PO Box","Initials","Internet Free Busy","Keywords","Language","Location","Manager's Name","Mileage","Notes","Office Location","Organizational ID Number","Other Address PO Box","Priority","Private","Profession","Referred By","Sensitivity","Spouse","User 1","User 2","User 3","User 4","Web Page"]
write('outlook-en-utf16.csv', outlook_en, [
  {"Title": "Dr.", "First Name": "Alan", "Middle Name": "Mathison", "Last Name": "Turing", "Company": "University of Manchester",
   "Department": "Computing Machine Laboratory", "Job Title": "Reader", "Business Street": "Oxford Road", "Business Street 2": "Kilburn Building",
   "Business City": "Manchester", "Business Postal Code": "M13 9PL", "Business Country/Region": "United Kingdom",
   "Business Phone": "+44 161 555 0101", "Mobile Phone": "+44 7700 900123", "Business Fax": "+44 161 555 0102", "Car Phone": "+44 7700 900124",
   "Birthday": "6/23/1912", "Anniversary": "0/0/00", "Categories": "Scientists;Bletchley", "E-mail Address": "alan@example.ac.uk", "E-mail Type": "SMTP",
   "E-mail 2 Address": "turing@example.org", "E-mail 2 Type": "SMTP", "Notes": "Enigma, \"Bombe\"", "Web Page": "https://turing.example.org/",
   "Manager's Name": "Max Newman", "Gender": "Unspecified", "Priority": "Normal", "Sensitivity": "Normal", "Private": "False"},
], 'utf-16-le', bom=b'\xff\xfe')

outlook_de = ["Anrede","Vorname","Weitere Vornamen","Nachname","Suffix","Firma","Abteilung","Position","Straße geschäftlich","Straße geschäftlich 2","Straße geschäftlich 3","Ort geschäftlich","Region geschäftlich","Postleitzahl geschäftlich","Land/Region geschäftlich","Straße privat","Straße privat 2","Straße privat 3","Ort privat","Bundesland/Kanton privat","Postleitzahl privat","Land/Region privat","Weitere Straße","Weitere Straße 2","Weitere Straße 3","Weiterer Ort","Weiteres/r Bundesland/Kanton","Weitere Postleitzahl","Weiteres/e Land/Region","Telefon Assistent","Fax geschäftlich","Telefon geschäftlich","Telefon geschäftlich 2","Rückmeldung","Autotelefon","Telefon Firma","Fax privat","Telefon privat","Telefon privat 2","ISDN","Mobiltelefon","Weiteres Fax","Weiteres Telefon","Pager","Haupttelefon","Mobiltelefon 2","Telefon für Hörbehinderte","Telex","Abrechnungsinformation","Benutzer 1","Benutzer 2","Benutzer 3","Benutzer 4","Beruf","Büro","E-Mail-Adresse","E-Mail-Typ","E-Mail: Angezeigter Name","E-Mail 2: Adresse","E-Mail 2: Typ","E-Mail 2: Angezeigter Name","E-Mail 3: Adresse","E-Mail 3: Typ","E-Mail 3: Angezeigter Name","Empfohlen von","Geburtstag","Geschlecht","Hobby","Initialen","Internet-Frei/Gebucht","Jahrestag","Kategorien","Kinder","Konto","Name Assistent","Name des/der Vorgesetzten","Notizen","Organisationsnr.","Ort","Partner","Postfach geschäftlich","Postfach privat","Priorität","Privat","Regierungsnr.","Reisekilometer","Sprache","Stichwörter","Vertraulichkeit","Verzeichnisserver","Webseite","Weiteres Postfach"]
write('outlook-de-1252.csv', outlook_de, [
  {"Anrede": "Frau", "Vorname": "Bärbel", "Nachname": "Müller-Lüdenscheidt", "Firma": "Öko GmbH", "Position": "Geschäftsführerin",
   "Straße privat": "Königsallee 1", "Ort privat": "Düsseldorf", "Postleitzahl privat": "40212", "Land/Region privat": "Deutschland",
   "Telefon privat": "+49 211 123456", "Mobiltelefon": "+49 171 7654321", "Telefon Firma": "+49 211 999", "Geburtstag": "24.12.1965",
   "Jahrestag": "1.6.1990", "Kategorien": "Kunden; Messe", "E-Mail-Adresse": "baerbel@example.de", "E-Mail-Typ": "SMTP",
   "Notizen": "Grüße – € 5", "Partner": "Hans Müller", "Geschlecht": "Weiblich", "Priorität": "Normal", "Vertraulichkeit": "Normal", "Privat": "Aus"},
], 'cp1252')
