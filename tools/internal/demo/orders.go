// Package demo is the demo data that the tools load into the order, lead and call services
// (tools/internal/seed): custom-field catalogs, two orders of a bank's calling campaigns, their
// leads, and how many calls those get. It names the user service's demo data (users by e-mail,
// agent groups by English name, services/user/internal/demo), which user-admin seed loads, since
// ids differ between databases.
package demo

import (
	"fmt"
	"strings"
	"time"
)

// AdminEmail is the user service's demo administrator: the author of the demo orders and leads,
// as if made with its API key.
const AdminEmail = "admin@demo.callcenter.local"

// Order is a demo order as the seed loads it. Agents, agent groups and custom fields are named
// by e-mail, group name and field code, since their ids differ between databases; the seed finds
// the order again by Code.
type Order struct {
	Code         string
	Title        string
	ServiceTitle string
	Status       string
	// Schedule has one ["HH:MM","HH:MM"] pair per day from Monday, or an empty day off.
	Schedule        [][]string
	Holidays        []string // dd.mm.yyyy
	TransferNumbers []TransferNumber
	// CustomValues maps an order custom-field code (OrderCustomFields) to its value.
	CustomValues map[string]any
	// AgentEmails are demo users of the call-center groups.
	AgentEmails     []string
	AgentGroupNames []string // English names of the user service's demo agent groups
	SipEndpointIDs  []int64
	// PredictiveMode turns on auto-dialing with the predictive dialer.
	PredictiveMode       bool
	QualifiedPerDayLimit int64
	Leads                []Lead
}

// TransferNumber is a line a call can be transferred to, with its names by language.
type TransferNumber struct {
	Number string
	Names  map[string]string
}

// Lead is a lead of a demo order. A phone that an earlier lead of the same order has (however
// it is written) makes the lead secondary, as the lead service decides on create.
type Lead struct {
	Name     string
	Phone    string
	LeadType string // straight or selection
	// Source is organic, non-organic or an ad-system code such as searchads.ads.
	Source       string
	AdCampaignID string
	// Comment is what the client told the landing page or quiz (sourceComment).
	Comment string
	CRMID   string // externalIdCrmA
	// Status is the status code the lead is created with (an in_progress status); Outcome, when
	// set, is the status code it is moved to afterwards, as an agent would after the talk.
	Status  string
	Outcome string
	// CallbackIn, when > 0, plans the next call that long after the seed runs.
	CallbackIn time.Duration
	Priority   int64
	// UTCOffset is sent when set; else the lead service infers it from the number when it can.
	UTCOffset *int64
	// CustomValues maps a lead custom-field code (LeadCustomFields) to its value.
	CustomValues map[string]any
}

// Demo order codes: the seed finds its orders by them.
const (
	OrderCreditCards = "demo-credit-cards-msk"
	OrderCarLoans    = "demo-car-loans-spb"
)

// Orders are two outbound campaigns of a call center working for a bank: credit cards in
// Moscow and car loans in Saint Petersburg, each with its agents, schedule, holidays, transfer
// lines and a morning's worth of leads from the usual sources. Holidays are the Russian public
// holidays of now's year and the next, so the calendar always looks current.
func Orders(now time.Time) []Order {
	weekdays := [][]string{
		{"09:00", "21:00"}, {"09:00", "21:00"}, {"09:00", "21:00"}, {"09:00", "21:00"}, {"09:00", "20:00"},
		{"10:00", "18:00"}, {},
	}
	return []Order{
		{
			Code:         OrderCreditCards,
			Title:        "Кредитные карты — Москва",
			ServiceTitle: "Банк «Восход»: кредитная карта «100 дней без %», заявки с сайта и рекламы",
			Status:       "success",
			Schedule:     weekdays,
			Holidays:     russianHolidays(now),
			TransferNumbers: []TransferNumber{
				{Number: "+74951234567", Names: map[string]string{"ru": "Старший смены", "gb": "Shift supervisor"}},
				{Number: "+78002504455", Names: map[string]string{"ru": "Горячая линия банка", "gb": "Bank hotline"}},
			},
			CustomValues: map[string]any{
				"client_company":              "Банк «Восход»",
				"monthly_lead_target":         1500,
				"cost_per_lead":               420.5,
				"requires_call_script_review": false,
				"campaign_start_date":         fmt.Sprintf("%d-01-15", now.Year()),
				"industry":                    "finance",
				"target_regions":              "moscow",
			},
			AgentEmails:          []string{"agent.petrov@demo.callcenter.local", "senior@demo.callcenter.local"},
			AgentGroupNames:      []string{"Sales"},
			SipEndpointIDs:       []int64{11, 12},
			PredictiveMode:       true,
			QualifiedPerDayLimit: 120,
			Leads:                creditCardLeads(),
		},
		{
			Code:         OrderCarLoans,
			Title:        "Автокредит — Санкт-Петербург",
			ServiceTitle: "Банк «Восход»: автокредит на новые и подержанные автомобили, Северо-Запад",
			Status:       "info",
			Schedule:     weekdays,
			Holidays:     russianHolidays(now),
			TransferNumbers: []TransferNumber{
				{Number: "+78123096070", Names: map[string]string{"ru": "Кредитный специалист", "gb": "Loan officer"}},
			},
			CustomValues: map[string]any{
				"client_company":              "Банк «Восход»",
				"monthly_lead_target":         600,
				"cost_per_lead":               780,
				"requires_call_script_review": true,
				"campaign_start_date":         fmt.Sprintf("%d-02-01", now.Year()),
				"industry":                    "automotive",
				"target_regions":              "saint_petersburg,moscow",
			},
			AgentEmails:          []string{"agent.smith@demo.callcenter.local", "senior@demo.callcenter.local", "agent.petrov@demo.callcenter.local"},
			AgentGroupNames:      []string{"Sales", "Customer support"},
			SipEndpointIDs:       []int64{21, 22, 23},
			QualifiedPerDayLimit: 40,
			Leads:                carLoanLeads(),
		},
	}
}

// russianHolidays are the non-working public holidays of now's year and the next.
func russianHolidays(now time.Time) []string {
	days := []string{"01.01", "02.01", "07.01", "23.02", "08.03", "01.05", "09.05", "12.06", "04.11"}
	out := make([]string, 0, 2*len(days))
	for _, y := range []int{now.Year(), now.Year() + 1} {
		for _, d := range days {
			out = append(out, fmt.Sprintf("%s.%d", d, y))
		}
	}
	return out
}

func offset(h int64) *int64 { return &h }

func creditCardLeads() []Lead {
	msk := offset(3)
	return []Lead{
		{Name: "Анна Соколова", Phone: "+79161234567", LeadType: "straight", Source: "searchads.ads", AdCampaignID: "vkhod-cards-msk-search",
			Comment: "Квиз: лимит до 300 000 ₽, доход от 80 000 ₽", CRMID: "CRM-104233", Status: "new", Outcome: "qualified", Priority: 10, UTCOffset: msk,
			CustomValues: map[string]any{"client_city": "Москва", "client_age": 34, "budget": 300000, "interests": "credit", "contact_channel": "phone"}},
		{Name: "Дмитрий Орлов", Phone: "+7 926 555-12-34", LeadType: "straight", Source: "socialads.ads", AdCampaignID: "vkhod-cards-msk-social",
			Comment: "Хочет карту с кэшбэком на АЗС", CRMID: "CRM-104234", Status: "new", UTCOffset: msk,
			CustomValues: map[string]any{"client_city": "Москва", "client_age": 41, "interests": "credit,insurance"}},
		{Name: "Елена Васильева", Phone: "+79037778899", LeadType: "straight", Source: "organic",
			Comment: "Заявка с сайта, раздел «Кредитные карты»", CRMID: "CRM-104235", Status: "callback", CallbackIn: 26 * time.Hour, UTCOffset: msk,
			CustomValues: map[string]any{"client_city": "Химки", "preferred_call_date": "2027-01-12", "contact_channel": "phone"}},
		{Name: "Сергей Кузьмин", Phone: "+79851002030", LeadType: "selection", Source: "mapads.ads", AdCampaignID: "vkhod-branches-map",
			CRMID: "CRM-104236", Status: "no_answer", Priority: 2, UTCOffset: msk},
		{Name: "Ольга Никитина", Phone: "+79257654321", LeadType: "straight", Source: "searchads.direct", AdCampaignID: "vkhod-cards-brand",
			Comment: "Уже клиент банка, зарплатная карта", CRMID: "CRM-104237", Status: "new", Outcome: "qualified", Priority: 20, UTCOffset: msk,
			CustomValues: map[string]any{"client_city": "Москва", "client_age": 29, "has_children": true, "budget": 150000, "interests": "credit,deposit"}},
		{Name: "Игорь Белов", Phone: "+79150001122", LeadType: "straight", Source: "non-organic",
			Comment: "Партнёрская сеть, оффер «Карта за 5 минут»", CRMID: "CRM-104238", Status: "busy", UTCOffset: msk},
		{Name: "Дмитрий Орлов", Phone: "+79265551234", LeadType: "straight", Source: "socialads.ads", AdCampaignID: "vkhod-cards-msk-social",
			Comment: "Повторная заявка: не дождался звонка", CRMID: "CRM-104239", Status: "new", Outcome: "duplicate", UTCOffset: msk},
		{Name: "Татьяна Морозова", Phone: "+79778889900", LeadType: "straight", Source: "videoads.ads", AdCampaignID: "vkhod-cards-video",
			CRMID: "CRM-104240", Status: "new", Outcome: "not_interested", UTCOffset: msk,
			CustomValues: map[string]any{"client_age": 57, "contact_channel": "messenger"}},
		{Name: "Алексей Попов", Phone: "+79999876543", LeadType: "straight", Source: "organic",
			Comment: "Спрашивал про льготный период", CRMID: "CRM-104241", Status: "callback", CallbackIn: 3 * time.Hour, Priority: 5, UTCOffset: msk},
		{Name: "Наталья Лебедева", Phone: "+79164443322", LeadType: "selection", Source: "mailads.ads", AdCampaignID: "vkhod-cards-mail",
			CRMID: "CRM-104242", Status: "new", Outcome: "rejected", UTCOffset: msk},
		{Name: "Виктор Семёнов", Phone: "+79031112233", LeadType: "straight", Source: "searchads.ads", AdCampaignID: "vkhod-cards-msk-search",
			Comment: "Квиз: лимит до 100 000 ₽, пенсионер", CRMID: "CRM-104243", Status: "new", UTCOffset: msk,
			CustomValues: map[string]any{"client_city": "Подольск", "client_age": 63, "budget": 100000}},
		{Name: "Мария Егорова", Phone: "+79855556677", LeadType: "straight", Source: "messengerads.ads", AdCampaignID: "vkhod-cards-bot",
			Comment: "Пришла из чат-бота", CRMID: "CRM-104244", Status: "no_answer", UTCOffset: msk,
			CustomValues: map[string]any{"contact_channel": "messenger", "interests": "credit"}},
		{Name: "Андрей Волков", Phone: "+79250102030", LeadType: "straight", Source: "organic",
			CRMID: "CRM-104245", Status: "new", Outcome: "wrong_number"},
		{Name: "Анна Соколова", Phone: "+7 (916) 123-45-67", LeadType: "straight", Source: "organic",
			Comment: "Вторая заявка с сайта: уточнить лимит", CRMID: "CRM-104246", Status: "new", Priority: 10, UTCOffset: msk},
		{Name: "Ксения Фёдорова", Phone: "+79152223344", LeadType: "straight", Source: "marketads.ads", AdCampaignID: "vkhod-cards-market",
			CRMID: "CRM-104247", Status: "new", UTCOffset: msk,
			CustomValues: map[string]any{"client_city": "Москва", "client_age": 25, "has_children": false}},
		{Name: "Павел Григорьев", Phone: "+79267778811", LeadType: "selection", Source: "socialads.direct", AdCampaignID: "vkhod-cards-retarget",
			CRMID: "CRM-104248", Status: "busy", UTCOffset: msk},
		{Name: "Юлия Козлова", Phone: "+79036665544", LeadType: "straight", Source: "searchads.ads", AdCampaignID: "vkhod-cards-msk-search",
			Comment: "Квиз: лимит до 500 000 ₽, ИП", CRMID: "CRM-104249", Status: "new", Outcome: "qualified", Priority: 15, UTCOffset: msk,
			CustomValues: map[string]any{"client_city": "Москва", "client_age": 38, "budget": 500000, "interests": "credit,investment"}},
		{Name: "Роман Зайцев", Phone: "+79684321098", LeadType: "straight", Source: "non-organic",
			CRMID: "CRM-104250", Status: "new", UTCOffset: msk},
	}
}

func carLoanLeads() []Lead {
	spb := offset(3)
	return []Lead{
		{Name: "Михаил Смирнов", Phone: "+79111234567", LeadType: "straight", Source: "searchads.ads", AdCampaignID: "vkhod-auto-spb-search",
			Comment: "Калькулятор: Kia Rio, взнос 20 %, 5 лет", CRMID: "CRM-204101", Status: "new", Outcome: "qualified", Priority: 10, UTCOffset: spb,
			CustomValues: map[string]any{"client_city": "Санкт-Петербург", "client_age": 36, "budget": 1800000, "interests": "credit,insurance"}},
		{Name: "Светлана Павлова", Phone: "+7 (921) 765-43-21", LeadType: "straight", Source: "organic",
			Comment: "Подержанный автомобиль у дилера", CRMID: "CRM-204102", Status: "callback", CallbackIn: 20 * time.Hour, UTCOffset: spb,
			CustomValues: map[string]any{"client_city": "Пушкин", "has_children": true, "contact_channel": "phone"}},
		{Name: "Константин Иванов", Phone: "+79312223344", LeadType: "straight", Source: "mapads.direct", AdCampaignID: "vkhod-auto-dealers-map",
			CRMID: "CRM-204103", Status: "no_answer", UTCOffset: spb},
		{Name: "Екатерина Новикова", Phone: "+79819998877", LeadType: "selection", Source: "socialads.ads", AdCampaignID: "vkhod-auto-social",
			Comment: "Ищет ставку ниже 15 %", CRMID: "CRM-204104", Status: "new", UTCOffset: spb,
			CustomValues: map[string]any{"client_age": 31, "budget": 1200000, "contact_channel": "messenger"}},
		{Name: "Артём Кравцов", Phone: "+79523334455", LeadType: "straight", Source: "videoads.ads", AdCampaignID: "vkhod-auto-video",
			CRMID: "CRM-204105", Status: "new", Outcome: "not_interested", UTCOffset: spb},
		{Name: "Ирина Богданова", Phone: "+79217778899", LeadType: "straight", Source: "non-organic",
			Comment: "Автосалон-партнёр, Haval Jolion", CRMID: "CRM-204106", Status: "busy", UTCOffset: spb,
			CustomValues: map[string]any{"client_city": "Санкт-Петербург", "budget": 2600000}},
		{Name: "Михаил Смирнов", Phone: "+7 911 123-45-67", LeadType: "straight", Source: "searchads.ads", AdCampaignID: "vkhod-auto-spb-search",
			Comment: "Повторная заявка с калькулятора", CRMID: "CRM-204107", Status: "new", Outcome: "duplicate", UTCOffset: spb},
		{Name: "Владимир Тихонов", Phone: "+79110002211", LeadType: "straight", Source: "organic",
			CRMID: "CRM-204108", Status: "new", Outcome: "rejected", UTCOffset: spb,
			CustomValues: map[string]any{"client_age": 67}},
		{Name: "Алина Комарова", Phone: "+79817654320", LeadType: "straight", Source: "searchads.direct", AdCampaignID: "vkhod-auto-brand",
			Comment: "Trade-in старого автомобиля", CRMID: "CRM-204109", Status: "new", Priority: 5, UTCOffset: spb,
			CustomValues: map[string]any{"client_city": "Гатчина", "client_age": 27, "preferred_call_date": "2027-01-20"}},
		{Name: "Олег Соловьёв", Phone: "+79313332211", LeadType: "selection", Source: "mailads.ads", AdCampaignID: "vkhod-auto-mail",
			CRMID: "CRM-204110", Status: "no_answer", UTCOffset: spb},
		{Name: "Дарья Белова", Phone: "+79526667788", LeadType: "straight", Source: "socialads.direct", AdCampaignID: "vkhod-auto-retarget",
			CRMID: "CRM-204111", Status: "new", Outcome: "wrong_number"},
		{Name: "Евгений Карпов", Phone: "+79214445566", LeadType: "straight", Source: "searchads.ads", AdCampaignID: "vkhod-auto-spb-search",
			Comment: "Калькулятор: Lada Vesta, без взноса", CRMID: "CRM-204112", Status: "new", Outcome: "qualified", Priority: 8, UTCOffset: spb,
			CustomValues: map[string]any{"client_city": "Санкт-Петербург", "client_age": 44, "budget": 1400000, "interests": "credit"}},
		{Name: "Полина Андреева", Phone: "+79119990011", LeadType: "straight", Source: "marketads.ads", AdCampaignID: "vkhod-auto-market",
			CRMID: "CRM-204113", Status: "callback", CallbackIn: 2 * time.Hour, UTCOffset: spb},
		{Name: "Николай Ефимов", Phone: "+79818887766", LeadType: "straight", Source: "organic",
			Comment: "Спрашивал про КАСКО в кредит", CRMID: "CRM-204114", Status: "new", UTCOffset: spb,
			CustomValues: map[string]any{"interests": "credit,insurance"}},
		{Name: "Вера Захарова", Phone: "+79530001122", LeadType: "straight", Source: "messengerads.ads", AdCampaignID: "vkhod-auto-bot",
			CRMID: "CRM-204115", Status: "new", UTCOffset: spb,
			CustomValues: map[string]any{"contact_channel": "messenger"}},
		{Name: "Глеб Макаров", Phone: "+79216543210", LeadType: "selection", Source: "non-organic",
			CRMID: "CRM-204116", Status: "busy", UTCOffset: spb},
	}
}

// SecondaryLeads counts the leads whose phone (digits only, however it is written) an earlier lead
// of the list has: the leads the lead service marks secondary.
func SecondaryLeads(leads []Lead) int {
	seen := map[string]bool{}
	n := 0
	for _, l := range leads {
		k := phoneDigits(l.Phone)
		if seen[k] {
			n++
		}
		seen[k] = true
	}
	return n
}

func phoneDigits(p string) string {
	return strings.Map(func(r rune) rune {
		if r >= '0' && r <= '9' {
			return r
		}
		return -1
	}, p)
}
