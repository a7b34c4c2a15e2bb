"""Generate the PDF and DOCX documents of the sample handbook (examples/handbook).

The binaries are committed next to this script; rerun it after editing the texts below:

    python scripts/make_handbook_binaries.py

Output is deterministic: PDFs are written with reportlab's ``invariant`` mode and DOCX
files get fixed core properties and fixed zip timestamps, so a rerun without text
changes produces byte-identical files.
"""

from __future__ import annotations

import io
import zipfile
from datetime import datetime
from pathlib import Path
from xml.sax.saxutils import escape

from docx import Document
from docx.enum.text import WD_ALIGN_PARAGRAPH
from docx.shared import Pt, RGBColor
from reportlab import rl_config
from reportlab.lib import colors
from reportlab.lib.enums import TA_LEFT
from reportlab.lib.pagesizes import A4
from reportlab.lib.styles import ParagraphStyle, getSampleStyleSheet
from reportlab.lib.units import mm
from reportlab.platypus import (
    KeepTogether,
    ListFlowable,
    ListItem,
    PageBreak,
    Paragraph,
    SimpleDocTemplate,
    Spacer,
    Table,
    TableStyle,
)

rl_config.invariant = 1

ROOT = Path(__file__).resolve().parent.parent / "examples" / "handbook"
FIXED_TIME = datetime(2026, 1, 1, 9, 0, 0)
ZIP_TIME = (2026, 1, 1, 9, 0, 0)

# --------------------------------------------------------------------------------------
# Document content. Each document is a list of blocks:
#   ("h1"|"h2"|"h3", text) headings, ("p", text) paragraph, ("ul", [items]) bullets,
#   ("ol", [items]) numbered list, ("table", [header, *rows]) table, ("page",) page break.
# --------------------------------------------------------------------------------------

SALARY_BANDS = [
    ("h1", "Salary Bands 2026"),
    (
        "p",
        "Northwind Cloud GmbH · People Operations · Strictly confidential – HR only · valid from 1 February 2026",
    ),
    ("h2", "1. Purpose of the salary bands"),
    (
        "p",
        "Salary bands make pay at Northwind consistent and explainable. Every role is mapped to a level "
        "from L1 to L7, and every level has a salary range (minimum, midpoint, maximum) per job family. "
        "Offers, promotions and the annual salary review are always set within the band of the level.",
    ),
    ("h2", "2. How to read the bands"),
    (
        "ul",
        [
            "All amounts are gross annual base salaries in EUR for a full-time (40-hour) contract in Berlin.",
            "Variable pay (sales commission, on-call allowances) is not included in the base salary ranges.",
            "Part-time salaries are calculated pro rata from the full-time amount.",
            "For locations outside Berlin the location factor on page 4 is applied to the whole band.",
        ],
    ),
    ("h2", "3. Changes for 2026"),
    (
        "ul",
        [
            "All bands were raised by 3.5% compared with 2025, effective 1 January 2026.",
            "Support bands L1–L3 were raised by an additional 2% after the 2025 market benchmark.",
            "A new level L7 (Distinguished Engineer) was introduced for the engineering job family.",
        ],
    ),
    ("h2", "4. Band positioning"),
    (
        "p",
        "We describe a salary's position in the band with the compa-ratio (salary divided by the midpoint). "
        "New hires who meet the level's expectations are usually offered between 0.90 and 1.00. "
        "A compa-ratio above 1.10 should only occur for consistently strong performers with long tenure in the level.",
    ),
    ("h2", "5. Confidentiality"),
    (
        "p",
        "This document is strictly confidential and available to People Operations only. Managers receive the "
        "band for a specific role from their HR business partner when they make an offer or prepare a promotion. "
        "Employees may ask People Operations for the band of their own level at any time.",
    ),
    ("page",),
    ("h2", "6. Engineering and Product bands"),
    ("h3", "6.1 Engineering"),
    (
        "table",
        [
            ["Level", "Title", "Range (EUR)", "Midpoint (EUR)"],
            ["L1", "Associate Engineer", "42,000 – 52,000 EUR", "47,000"],
            ["L2", "Engineer", "52,000 – 64,000 EUR", "58,000"],
            ["L3", "Engineer II", "64,000 – 78,000 EUR", "71,000"],
            ["L4", "Senior Engineer", "78,000 – 96,000 EUR", "87,000"],
            ["L5", "Staff Engineer", "96,000 – 118,000 EUR", "107,000"],
            ["L6", "Principal Engineer", "118,000 – 140,000 EUR", "129,000"],
            ["L7", "Distinguished Engineer", "140,000 – 170,000 EUR", "155,000"],
        ],
    ),
    (
        "p",
        "Engineering managers use the same bands as individual contributors of the same level "
        "(Engineering Manager = L5, Senior Engineering Manager = L6, CTO is outside the band system).",
    ),
    ("h3", "6.2 Product Management and Design"),
    (
        "table",
        [
            ["Level", "Title", "Range (EUR)", "Midpoint (EUR)"],
            ["L3", "Product Manager / Product Designer", "66,000 – 80,000 EUR", "73,000"],
            ["L4", "Senior Product Manager / Senior Designer", "80,000 – 98,000 EUR", "89,000"],
            ["L5", "Group Product Manager / Design Lead", "98,000 – 120,000 EUR", "109,000"],
            ["L6", "Director of Product", "120,000 – 145,000 EUR", "132,500"],
        ],
    ),
    ("h3", "6.3 Notes for Engineering and Product"),
    (
        "ul",
        [
            "On-call allowances (250 EUR per week as primary) are paid on top of the band.",
            "Promotion from L3 to L4 is the most common step; the new salary must be at least the L4 minimum.",
            "Hiring above the L5 midpoint needs approval from the CTO in addition to the Head of People.",
        ],
    ),
    ("page",),
    ("h2", "7. Go-to-market and operations bands"),
    ("h3", "7.1 Customer Support"),
    (
        "table",
        [
            ["Level", "Title", "Range (EUR)", "Midpoint (EUR)"],
            ["L1", "Support Agent", "36,000 – 44,000 EUR", "40,000"],
            ["L2", "Support Specialist", "44,000 – 54,000 EUR", "49,000"],
            ["L3", "Senior Support Specialist", "54,000 – 66,000 EUR", "60,000"],
            ["L4", "Support Team Lead", "66,000 – 80,000 EUR", "73,000"],
            ["L5", "Support Manager", "80,000 – 98,000 EUR", "89,000"],
            ["L6", "Head of Support", "98,000 – 125,000 EUR", "111,500"],
        ],
    ),
    ("h3", "7.2 Sales (base salary)"),
    (
        "table",
        [
            ["Level", "Title", "Base range (EUR)", "Variable split"],
            ["L2", "Sales Development Representative", "40,000 – 48,000 EUR", "70 / 30"],
            ["L3", "Account Executive", "55,000 – 68,000 EUR", "60 / 40"],
            ["L4", "Senior Account Executive", "68,000 – 84,000 EUR", "60 / 40"],
            ["L5", "Sales Manager", "84,000 – 104,000 EUR", "70 / 30"],
            ["L6", "VP Sales", "115,000 – 145,000 EUR", "70 / 30"],
        ],
    ),
    ("h3", "7.3 Finance and People Operations"),
    (
        "table",
        [
            ["Level", "Title", "Range (EUR)", "Midpoint (EUR)"],
            ["L2", "Accountant / People Operations Specialist", "46,000 – 56,000 EUR", "51,000"],
            ["L3", "Senior Accountant / HR Business Partner", "56,000 – 70,000 EUR", "63,000"],
            [
                "L4",
                "Finance Operations Lead / Senior HR Business Partner",
                "70,000 – 86,000 EUR",
                "78,000",
            ],
            ["L5", "Head of Finance Operations / Head of People", "86,000 – 110,000 EUR", "98,000"],
        ],
    ),
    ("h3", "7.4 Department notes"),
    (
        "ul",
        [
            "Sales: the variable split is base / variable at 100% target attainment (on-target earnings). "
            "Commission plans are defined per fiscal year by the VP Sales and Finance.",
            "Support: shift allowances for weekend and public-holiday duty are paid on top of the band.",
            "Finance and People: the CFO and the Head of People themselves are outside the band system.",
        ],
    ),
    ("page",),
    ("h2", "8. Location factors"),
    (
        "p",
        "Bands are defined for Berlin. For other locations the whole band is multiplied by the location factor:",
    ),
    (
        "table",
        [
            ["Location", "Factor", "Payroll currency"],
            ["Berlin and remote Germany", "1.00", "EUR"],
            ["Remote EU – Netherlands, Ireland", "1.00", "EUR"],
            ["Remote EU – Portugal, Spain", "0.80", "EUR"],
            ["Remote EU – Poland", "0.70", "PLN (fixed planning rate)"],
            ["Kyiv office", "0.55", "UAH, reviewed twice a year"],
            ["Shanghai office", "0.70", "CNY at the 2026 planning rate of 7.8 CNY per EUR"],
        ],
    ),
    (
        "p",
        "Example: an L4 Senior Engineer in Kyiv has a band of 78,000 × 0.55 = 42,900 EUR to 96,000 × 0.55 = 52,800 EUR, "
        "paid in UAH.",
    ),
    ("h2", "9. Approvals and exceptions"),
    (
        "table",
        [
            ["Situation", "Approval needed"],
            [
                "Offer or raise within the band, up to the midpoint",
                "Hiring manager and HR business partner",
            ],
            ["Offer or raise above the midpoint", "Head of People"],
            ["Offer or raise above the band maximum (max. 10% above)", "Head of People and CFO"],
        ],
    ),
    ("h2", "10. Review calendar"),
    (
        "ul",
        [
            "Bands are reviewed every January against market data from two salary surveys.",
            "Individual salary changes happen in the April and October review cycles (see the Performance Review Guide).",
            "Questions about this document: Alice Moreau, Head of People (alice@northwind.example).",
        ],
    ),
]

CONTRACTOR_EXPENSES = [
    ("h1", "Expense Policy for Contractors"),
    ("p", "Northwind Cloud GmbH · Finance · Version 1.3 · valid from 10 April 2026"),
    ("h2", "1. Scope and principles"),
    ("h3", "1.1 Who this policy applies to"),
    (
        "p",
        "This policy applies to independent contractors, freelancers and agency staff who provide services to "
        "Northwind Cloud under a service agreement or statement of work (together: contractors). It does not "
        "apply to employees; employees follow the Expense Policy for Employees.",
    ),
    ("h3", "1.2 The core rule: pre-approval"),
    (
        "p",
        "Contractors are reimbursed only for pre-approved expenses. An expense is pre-approved when the engaging "
        "manager has approved a Contractor Expense Pre-Approval request in SpendWise (guest access) before the "
        "cost is incurred. Each approval receives a number in the format PA-2026-0000. Expenses without a "
        "pre-approval are never reimbursed, regardless of the amount.",
    ),
    (
        "ul",
        [
            "Pre-approval requests up to 1,000 EUR are approved by the engaging manager alone.",
            "Requests above 1,000 EUR are approved by the engaging manager and then by Finance.",
            "A pre-approval is valid for 60 days and only for the purpose and the maximum amount stated.",
            "Expenses that are already covered by the fee in the statement of work are not reimbursed separately.",
        ],
    ),
    ("h3", "1.3 General principles"),
    (
        "ul",
        [
            "Expenses must be necessary to deliver the contracted services and reasonably priced.",
            "Contractors carry their own business costs (equipment, software, insurance, office).",
            "Every expense needs an itemised receipt in the contractor's or Northwind's name.",
        ],
    ),
    ("page",),
    ("h2", "2. Travel"),
    ("h3", "2.1 Booking"),
    (
        "p",
        "Travel for contractors is booked exclusively through the travel agency TravelNest, by the engaging manager "
        "or the Travel Desk, after the trip has been pre-approved. Contractors must not book flights, trains or "
        "hotels themselves. Self-booked travel is not reimbursed.",
    ),
    ("h3", "2.2 Class of travel and hotels"),
    (
        "ul",
        [
            "Flights: economy class on all flights, regardless of the flight duration.",
            "Rail: 2nd class.",
            "Hotels: within the per-city caps of the Business Travel Policy (for example Berlin 150 EUR, London 220 EUR per night).",
            "Rental cars only if pre-approved and booked through TravelNest.",
        ],
    ),
    ("h3", "2.3 Meals and daily costs – no per diem"),
    (
        "p",
        "Contractors do not receive a per diem or any other daily allowance. During pre-approved travel, meals are "
        "reimbursed at actual cost up to 40 EUR per travel day, against itemised receipts. Alcohol is not "
        "reimbursed. Meals on days without pre-approved travel are not reimbursed.",
    ),
    ("h3", "2.4 Local transport and travel time"),
    (
        "ul",
        [
            "Public transport at the destination is reimbursable with receipts.",
            "Taxis are reimbursable only for airport transfers or after 22:00, up to 60 EUR per ride.",
            "Travel time is billable only if the statement of work says so.",
            "Commuting to a Northwind office in the contractor's home city is not business travel.",
        ],
    ),
    ("page",),
    ("h2", "3. Invoicing and reimbursement"),
    ("h3", "3.1 Monthly invoice"),
    (
        "p",
        "Contractors invoice monthly, by the 5th working day of the following month. Reimbursable expenses are "
        "included in the same monthly invoice as separate line items, with the expense report attached. "
        "Separate expense-only invoices are not accepted.",
    ),
    ("h3", "3.2 What the expense report must contain"),
    (
        "ul",
        [
            "The SpendWise expense report exported as PDF.",
            "The pre-approval number (PA-2026-…) for every expense.",
            "Itemised receipts for every line, in the original currency.",
            "The purchase order (PO) number of the engagement.",
        ],
    ),
    ("h3", "3.3 Deadlines"),
    (
        "p",
        "Expenses must be invoiced within 60 days of the date they were incurred. Expenses invoiced later than "
        "60 days are not reimbursed. Invoices go to ap@northwind.example; Accounts Payable pays correct invoices "
        "within 30 days of receipt.",
    ),
    ("h3", "3.4 Currency and VAT"),
    (
        "ul",
        [
            "Invoices are issued in EUR. Foreign-currency expenses are converted at the ECB reference rate of the expense date.",
            "VAT is shown separately. Contractors based in another EU country invoice under the reverse-charge procedure.",
            "Expenses are reimbursed at the net amount if the contractor can reclaim input VAT.",
        ],
    ),
    ("page",),
    ("h2", "4. Not reimbursable"),
    (
        "p",
        "The following costs are never reimbursed to contractors, even if they are related to Northwind work:",
    ),
    (
        "ul",
        [
            "Per diems and daily allowances of any kind.",
            "Own laptops, phones, monitors and other hardware; software licences and subscriptions.",
            "Phone and internet costs, coworking space, office rent.",
            "Training courses, certifications and conference tickets, unless explicitly pre-approved as part of a project.",
            "Professional liability insurance and other insurance.",
            "Client entertainment, unless pre-approved in writing for a specific event.",
            "Alcohol, fines, parking tickets, seat or cabin upgrades, minibar.",
        ],
    ),
    ("h2", "5. Equipment provided by Northwind"),
    (
        "p",
        "If security requirements make a Northwind-managed device necessary (for example for access to customer data), "
        "IT lends the contractor a laptop for the duration of the engagement. VPN access is set up on request of "
        "the engaging manager and ends with the contract. Loaned equipment must be returned within 5 working days "
        "after the end of the engagement; unreturned equipment is deducted from the final invoice.",
    ),
    ("page",),
    ("h2", "6. Roles and contacts"),
    ("h3", "6.1 Engaging manager"),
    (
        "ul",
        [
            "Approves or rejects pre-approval requests in SpendWise, normally within 3 working days.",
            "Books the contractor's travel through TravelNest.",
            "Confirms the services and expenses on the monthly invoice before it goes to Accounts Payable.",
        ],
    ),
    ("h3", "6.2 Finance"),
    (
        "ul",
        [
            "Second approval for pre-approvals above 1,000 EUR.",
            "Checks invoices against pre-approvals and receipts.",
            "Questions: finance-ops@northwind.example or Carol Jensen, Finance Operations Lead.",
        ],
    ),
    ("h2", "7. Examples"),
    (
        "ol",
        [
            "A contractor runs a two-day workshop in Berlin. The manager pre-approves train travel and two hotel nights "
            "(PA-2026-0142) and books them through TravelNest. The contractor adds dinner receipts of 32 EUR and 38 EUR "
            "to the monthly invoice with the SpendWise report attached. Reimbursed: 70 EUR.",
            "A contractor books a flight to London on their own because it was cheaper. Not reimbursed: travel must be "
            "booked through TravelNest by the engaging manager.",
            "A contractor invoices pre-approved hotel costs from February on the invoice sent in late May (more than 60 days "
            "later). Not reimbursed.",
            "A contractor asks for the employee per diem of 66 EUR for a day in London. Not possible: contractors receive "
            "no per diem; meals are reimbursed at cost up to 40 EUR per travel day.",
        ],
    ),
]

PERFORMANCE_REVIEW = [
    ("h1", "Performance Review Guide for Managers"),
    ("p", "Northwind Cloud · People Operations · For people managers only · Version 2026.1"),
    ("h2", "1. The review cycle"),
    (
        "p",
        "Northwind runs performance reviews twice a year, in April and in October. Every employee who has been with "
        "Northwind for at least 3 months at the start of a cycle takes part. Reviews are done in PeoplePort under "
        "Performance.",
    ),
    ("h3", "1.1 April cycle"),
    (
        "table",
        [
            ["Step", "Dates"],
            ["Self-assessment by the employee", "1–10 April"],
            ["Manager assessment and proposed rating", "11–20 April"],
            ["Calibration meetings", "21–30 April"],
            ["Feedback conversations", "by 15 May"],
            ["Salary changes and promotions effective", "1 July"],
        ],
    ),
    ("h3", "1.2 October cycle"),
    (
        "table",
        [
            ["Step", "Dates"],
            ["Self-assessment by the employee", "1–10 October"],
            ["Manager assessment and proposed rating", "11–20 October"],
            ["Calibration meetings", "21–31 October"],
            ["Feedback conversations", "by 15 November"],
            ["Salary changes and promotions effective", "1 January"],
        ],
    ),
    ("h3", "1.3 What managers prepare"),
    (
        "ul",
        [
            "Review the goals set in the previous cycle and collect evidence (delivered work, peer feedback, customer feedback).",
            "Ask 2 to 4 peers for written feedback in PeoplePort by the 8th of the review month.",
            "Write the assessment against the level expectations of the employee's current level, not the next one.",
        ],
    ),
    ("page",),
    ("h2", "2. Rating scale"),
    ("p", "Every employee receives one overall rating on a scale from 1 to 5:"),
    (
        "table",
        [
            ["Rating", "Label", "Meaning"],
            ["5", "Outstanding", "Consistently far above the level; impact beyond the team"],
            ["4", "Exceeds expectations", "Regularly above the level expectations"],
            [
                "3",
                "Meets expectations",
                "Fully meets the expectations of the level; a good, solid result",
            ],
            ["2", "Partially meets expectations", "Meets some expectations; clear gaps to work on"],
            ["1", "Does not meet expectations", "Significant gaps; immediate action needed"],
        ],
    ),
    ("h3", "2.1 Expected distribution"),
    (
        "p",
        "There is no forced distribution, but across a department we typically see about 5–10% at 5, 20–25% at 4, "
        "55–60% at 3 and about 10% at 1 or 2. Large deviations are discussed in calibration.",
    ),
    ("h3", "2.2 Consequences of low ratings"),
    (
        "ul",
        [
            "Rating 2: a written development plan with clear goals, reviewed monthly until the next cycle.",
            "Rating 1: a performance improvement plan (PIP) of 60 days, set up with the HR business partner.",
            "Employees rated 1 or 2 are not eligible for a merit increase in that cycle.",
        ],
    ),
    ("page",),
    ("h2", "3. Calibration meetings"),
    (
        "p",
        "Calibration makes ratings fair and comparable across teams. Proposed ratings are not final and must not "
        "be shared with employees before calibration is complete.",
    ),
    ("h3", "3.1 Who takes part"),
    (
        "ul",
        [
            "All people managers of a department; the department head chairs the meeting.",
            "The HR business partner facilitates, keeps time and records decisions.",
            "Plan about 90 minutes per 25 employees.",
        ],
    ),
    ("h3", "3.2 How the meeting works"),
    (
        "ol",
        [
            "The HR business partner shows the distribution of proposed ratings for the department.",
            "Managers present every proposed 1, 2 and 5, and every promotion case, with evidence.",
            "The group compares similar roles across teams and adjusts ratings where the evidence does not support them.",
            "The bias checklist is read out before the discussion (recency, similarity, halo, central tendency).",
            "Every change is recorded with a reason in PeoplePort.",
        ],
    ),
    ("h3", "3.3 After calibration"),
    (
        "p",
        "People Operations locks the final ratings in PeoplePort. Managers then hold the feedback conversations; "
        "the employee sees the written assessment and the final rating in PeoplePort after the conversation.",
    ),
    ("page",),
    ("h2", "4. Promotion criteria"),
    (
        "p",
        "Promotions are decided in the April and October cycles only. A promotion case is considered when all of "
        "the following criteria are met:",
    ),
    (
        "ol",
        [
            "At least 12 months in the current level (exceptions need the department head and the Head of People).",
            "A rating of 4 or 5 in the two most recent review cycles.",
            "Evidence of working at the scope of the next level for at least 6 months, described in the written "
            "promotion case using the level expectations.",
            "Support from the department head and confirmation in the calibration meeting.",
        ],
    ),
    ("h3", "4.1 Promotion increase"),
    (
        "p",
        "A promotion comes with a salary increase of 8–12%. The new salary must be at least the minimum of the new "
        "level's band; the HR business partner checks this against the salary bands.",
    ),
    ("h3", "4.2 Writing the promotion case"),
    (
        "ul",
        [
            "Maximum two pages, submitted in PeoplePort by the last day of the manager-assessment window.",
            "Include two or three concrete examples with impact, plus peer feedback.",
            "State what the employee will own at the new level.",
        ],
    ),
    ("h3", "4.3 If the promotion is not approved"),
    (
        "p",
        "Give clear feedback on which criteria were not met and agree a development plan. The case can be submitted "
        "again in the next cycle.",
    ),
]

BENEFITS = [
    ("h1", "Benefits Overview 2026"),
    (
        "p",
        "People Operations · for employees of Northwind Cloud GmbH · last updated 3 November 2025",
    ),
    (
        "p",
        "This overview summarises the benefits Northwind offers on top of salary. Benefits start on your first "
        "working day unless stated otherwise. Employees in Kyiv and Shanghai have local benefit packages; "
        "see section 7. Contractors are not eligible for these benefits.",
    ),
    ("h2", "1. Health"),
    ("h3", "1.1 Health insurance"),
    (
        "p",
        "In Germany you are insured with the statutory health insurance fund of your choice, and Northwind pays "
        "the employer share. In addition, Northwind pays for a supplementary private health insurance with our "
        "provider HanseMed for every employee. It covers:",
    ),
    (
        "ul",
        [
            "Single or double room and treatment by the senior physician during hospital stays.",
            "Naturopathic treatment up to 500 EUR per year.",
            "Glasses and contact lenses up to 300 EUR every 2 years.",
        ],
    ),
    (
        "p",
        "You are registered automatically in your first month. Family members can be added at a group rate "
        "paid by you.",
    ),
    ("h3", "1.2 Dental"),
    (
        "p",
        "The HanseMed dental plan is also paid by Northwind. It covers 90% of the costs of dentures, crowns and "
        "implants up to 1,500 EUR per year, and two professional teeth cleanings per year in full.",
    ),
    ("h3", "1.3 Mental health"),
    (
        "p",
        "Through our partner OpenMind, every employee can use 6 free counselling sessions per year, by video or "
        "in person, in English, German, Ukrainian or Mandarin. Northwind does not learn who uses the service.",
    ),
    ("h2", "2. Fitness and mobility"),
    ("h3", "2.1 Gym allowance"),
    (
        "p",
        "Northwind contributes 40 EUR per month to any gym or sports membership (fitness studio, climbing, "
        "swimming, sports club). Upload your membership confirmation once in SpendWise under the category "
        '"Gym allowance"; the allowance is then paid monthly with your salary.',
    ),
    ("h3", "2.2 Bike leasing"),
    (
        "p",
        "You can lease up to two bikes or e-bikes through our partner LeaseCycle by salary conversion:",
    ),
    (
        "ul",
        [
            "Bike value up to 7,000 EUR each, term of 36 months.",
            "Northwind pays the insurance and the yearly service.",
            "At the end of the term LeaseCycle offers to sell you the bike at its residual value.",
            "Order in the LeaseCycle portal with the company code NW-BIKE; approval by People Operations within 2 working days.",
        ],
    ),
    ("h3", "2.3 Public transport"),
    (
        "p",
        "Northwind pays the full price of the Deutschlandticket as a job ticket for every employee in Germany. "
        "Order it in PeoplePort under Benefits.",
    ),
    ("h2", "3. Learning and development"),
    (
        "p",
        "Every employee has a personal learning budget of 1,000 EUR per calendar year for courses, conferences, "
        "books and certifications, plus 3 paid learning days per year.",
    ),
    (
        "ul",
        [
            "Request learning expenses in PeoplePort under Learning; your manager approves.",
            "Unused budget does not carry over to the next year.",
            "Certifications above 1,000 EUR can be approved by your department head; a repayment agreement applies if "
            "you leave within 12 months.",
            "Language courses (German, English) are paid in addition to the learning budget.",
        ],
    ),
    ("h2", "4. Pension and financial benefits"),
    ("h3", "4.1 Company pension"),
    (
        "p",
        "You can convert part of your gross salary into a company pension (bAV) with our pension provider "
        "Vorsorgewerk Nord. Northwind adds 20% on top of the amount you convert, up to 150 EUR per month "
        "employer contribution. Enrol in PeoplePort; changes are possible once per quarter.",
    ),
    ("h3", "4.2 Childcare subsidy"),
    (
        "p",
        "For children who do not yet attend school, Northwind reimburses kindergarten or daycare fees up to "
        "200 EUR per month per child, tax-free.",
    ),
    ("h3", "4.3 Employee discounts"),
    (
        "p",
        "Through the Corporate Benefits portal you get discounts with more than 1,500 brands, for example "
        "electronics, travel and fashion.",
    ),
    ("h2", "5. Time off and family"),
    (
        "p",
        "Vacation (25 days), sick leave, parental leave and special leave are described in the Leave Policy 2026.",
    ),
    ("h2", "6. Equipment and working from home"),
    (
        "ul",
        [
            "Choice of laptop (MacBook Pro or ThinkPad), two monitors, headset; replaced every 3 years.",
            "Home office equipment: up to 300 EUR once every 3 years, see the Expense Policy for Employees.",
        ],
    ),
    ("h2", "7. Kyiv and Shanghai"),
    (
        "table",
        [
            ["Benefit", "Kyiv", "Shanghai"],
            [
                "Health insurance",
                "Private medical insurance (DMS) with MedPolis Ukraine, incl. dental",
                "Supplementary commercial medical insurance with Huaxia Health",
            ],
            ["Gym allowance", "40 EUR per month (paid in UAH)", "40 EUR per month (paid in CNY)"],
            ["Learning budget", "1,000 EUR per year", "1,000 EUR per year"],
            ["Pension", "Statutory only", "Statutory social insurance and housing fund"],
            ["Other", "Power backup subsidy (see Kyiv office guide)", "Annual health check"],
        ],
    ),
    ("h2", "8. Questions"),
    (
        "p",
        "Contact People Operations at people@northwind.example or in #ask-people. Benefits are reviewed every "
        "November for the following year.",
    ),
]

VPN_SETUP = [
    ("h1", "VPN Setup Guide (WireGuard)"),
    ("p", "IT Services · applies to all company laptops · last updated 2 March 2026"),
    ("h2", "1. When you need the VPN"),
    (
        "p",
        "Most Northwind tools (email, Slack, PeoplePort, SpendWise, Northwind Desk) work without VPN through single "
        "sign-on. You need the VPN for internal systems only:",
    ),
    (
        "ul",
        [
            "Staging and production admin consoles, Grafana dashboards and the internal wiki (*.int.northwind.example).",
            "The internal Git server and build system.",
            "The Finance file share.",
        ],
    ),
    ("h2", "2. What you need"),
    (
        "ul",
        [
            "A company laptop enrolled in device management (Intune), with disk encryption switched on.",
            "The Northwind WireGuard client, version 1.4 or later.",
            "Your SSO account with multi-factor authentication.",
        ],
    ),
    ("h2", "3. Installing the client"),
    ("h3", "3.1 Windows"),
    (
        "p",
        'Open Company Portal, search for "Northwind WireGuard" and click Install. The client starts automatically '
        "and appears in the system tray.",
    ),
    ("h3", "3.2 macOS"),
    (
        "p",
        'Open the Self Service app, choose "Northwind WireGuard" and click Install. Allow the VPN configuration '
        "when macOS asks.",
    ),
    ("h3", "3.3 Linux"),
    (
        "p",
        "Install wireguard-tools with your package manager (for example sudo apt install wireguard-tools), download "
        "your personal configuration file nw0.conf from the self-service portal and start the tunnel with "
        "sudo wg-quick up nw0.",
    ),
    ("h2", "4. Configuration"),
    (
        "table",
        [
            ["Setting", "Value"],
            ["Server (endpoint)", "vpn.northwind.example"],
            ["Port", "51820/UDP"],
            ["Fallback endpoint", "vpn-alt.northwind.example:443 (UDP)"],
            ["DNS server", "10.20.0.53"],
            ["Routed networks (split tunnel)", "10.20.0.0/16"],
            ["Configuration portal", "https://selfservice.northwind.example/vpn"],
        ],
    ),
    (
        "p",
        "Windows and macOS clients receive the configuration automatically. Your device key is rotated every 90 days; "
        "the client does this for you. On Linux, download a new configuration when the portal reminds you.",
    ),
    ("h2", "5. Connecting"),
    (
        "ol",
        [
            "Click Connect in the WireGuard client.",
            "Sign in with SSO in the browser window that opens and approve the MFA prompt.",
            "The tray icon turns green. With client version 1.4 or later, the session lasts 12 hours and is renewed "
            "silently while you are working.",
        ],
    ),
    ("h2", "6. Troubleshooting"),
    ("h3", "6.1 The VPN drops every hour"),
    (
        "p",
        "Clients older than version 1.4 cannot renew the session token in the background, so the connection drops "
        "after 60 minutes. To fix it:",
    ),
    (
        "ol",
        [
            "Re-authenticate: click Disconnect, then Connect, and sign in with SSO again. This restores the connection "
            "for the next hour.",
            "Update the client to 1.4: on Windows open Company Portal, on macOS Self Service, and install the update "
            '"Northwind WireGuard 1.4". On Linux install the latest configuration from the portal.',
            "Check the version under Help → About. After the update, hourly drops should stop.",
        ],
    ),
    ("h3", "6.2 Connected, but internal addresses don't work"),
    (
        "p",
        "Usually a DNS problem. Check that the DNS server 10.20.0.53 is set for the tunnel, for example with "
        "nslookup wiki.int.northwind.example 10.20.0.53. Disconnect and connect again to reapply the settings.",
    ),
    ("h3", "6.3 No connection from hotels or public Wi-Fi"),
    (
        "p",
        "Some networks block UDP port 51820. Switch to the fallback endpoint vpn-alt.northwind.example on port 443 "
        "in the client settings (Settings → Endpoint → Fallback).",
    ),
    ("h3", "6.4 Video calls are slow while on VPN"),
    (
        "p",
        "Only internal networks are routed through the VPN (split tunnel), so video calls should not be affected. "
        "If they are, your configuration may be outdated: download a new one from the self-service portal.",
    ),
    ("h2", "7. Contacting IT"),
    (
        "p",
        "If the steps above don't help, open a ticket at the IT ticket desk, https://help.northwind.example, category "
        '"VPN & Network". Include your client version, operating system, the time the problem occurred and a '
        "screenshot of the error.",
    ),
    (
        "ul",
        [
            "Email: it-desk@northwind.example (creates a ticket automatically).",
            "Phone: +49 30 5555 4357 (internal extension 4357), Monday to Friday 08:00–18:00 CET.",
            "Urgent problems outside these hours: post in #it-help in Slack; the IT on-duty person checks it until 22:00.",
        ],
    ),
    (
        "p",
        "Contractors receive VPN access only when the engaging manager requests it; access ends automatically on "
        "the contract end date.",
    ),
]

# --------------------------------------------------------------------------------------
# PDF rendering
# --------------------------------------------------------------------------------------


def _pdf_styles() -> dict[str, ParagraphStyle]:
    base = getSampleStyleSheet()
    return {
        "h1": ParagraphStyle(
            "h1",
            parent=base["Heading1"],
            fontSize=18,
            spaceAfter=8,
            textColor=colors.HexColor("#1f3a5f"),
        ),
        "h2": ParagraphStyle(
            "h2",
            parent=base["Heading2"],
            fontSize=13.5,
            spaceBefore=10,
            spaceAfter=5,
            textColor=colors.HexColor("#1f3a5f"),
        ),
        "h3": ParagraphStyle(
            "h3", parent=base["Heading3"], fontSize=11, spaceBefore=7, spaceAfter=3
        ),
        "p": ParagraphStyle(
            "p",
            parent=base["BodyText"],
            fontSize=9.8,
            leading=13.5,
            alignment=TA_LEFT,
            spaceAfter=5,
        ),
        "cell": ParagraphStyle("cell", parent=base["BodyText"], fontSize=9, leading=11.5),
        "cellh": ParagraphStyle(
            "cellh",
            parent=base["BodyText"],
            fontSize=9,
            leading=11.5,
            fontName="Helvetica-Bold",
            textColor=colors.white,
        ),
    }


def _table(rows: list[list[str]], st: dict[str, ParagraphStyle], width: float) -> Table:
    data = [
        [Paragraph(escape(c), st["cellh"] if i == 0 else st["cell"]) for c in row]
        for i, row in enumerate(rows)
    ]
    ncol = len(rows[0])
    if ncol == 2:
        widths = [width * 0.55, width * 0.45]
    elif ncol == 3:
        widths = (
            [width * 0.34, width * 0.22, width * 0.44]
            if rows[0][1] in ("Factor", "Label")
            else [width / 3] * 3
        )
        if rows[0][1] == "Label":
            widths = [width * 0.12, width * 0.30, width * 0.58]
    else:
        widths = [width * 0.10, width * 0.42, width * 0.28, width * 0.20]
    t = Table(data, colWidths=widths, repeatRows=1)
    t.setStyle(
        TableStyle(
            [
                ("BACKGROUND", (0, 0), (-1, 0), colors.HexColor("#1f3a5f")),
                ("GRID", (0, 0), (-1, -1), 0.4, colors.HexColor("#9aa5b1")),
                ("ROWBACKGROUNDS", (0, 1), (-1, -1), [colors.white, colors.HexColor("#f1f4f8")]),
                ("VALIGN", (0, 0), (-1, -1), "TOP"),
                ("TOPPADDING", (0, 0), (-1, -1), 3),
                ("BOTTOMPADDING", (0, 0), (-1, -1), 3),
            ]
        )
    )
    return t


def _list(items: list[str], st: dict[str, ParagraphStyle], ordered: bool) -> ListFlowable:
    flow = [ListItem(Paragraph(escape(i), st["p"]), leftIndent=12) for i in items]
    if ordered:
        return ListFlowable(
            flow,
            bulletType="1",
            start="1",
            leftIndent=14,
            bulletFontSize=9.5,
            bulletFontName="Helvetica",
            bulletFormat="%s.",
        )
    return ListFlowable(
        flow,
        bulletType="bullet",
        start="–",
        leftIndent=14,
        bulletFontSize=9,
        bulletFontName="Helvetica",
    )


def build_pdf(path: Path, blocks: list[tuple], title: str, footer: str) -> None:
    st = _pdf_styles()
    doc = SimpleDocTemplate(
        str(path),
        pagesize=A4,
        invariant=1,
        leftMargin=20 * mm,
        rightMargin=20 * mm,
        topMargin=22 * mm,
        bottomMargin=20 * mm,
        title=title,
        author="Northwind Cloud GmbH",
        subject=title,
        creator="Northwind Cloud document templates",
    )
    width = doc.width
    story = []
    for block in blocks:
        kind = block[0]
        if kind in ("h1", "h2", "h3", "p"):
            story.append(Paragraph(escape(block[1]), st[kind]))
        elif kind in ("ul", "ol"):
            story.append(_list(block[1], st, ordered=kind == "ol"))
            story.append(Spacer(1, 3))
        elif kind == "table":
            story.append(KeepTogether([_table(block[1], st, width), Spacer(1, 6)]))
        elif kind == "page":
            story.append(PageBreak())
        else:  # pragma: no cover - content error
            raise ValueError(kind)

    def decorate(canvas, d):
        canvas.saveState()
        canvas.setFont("Helvetica", 8)
        canvas.setFillColor(colors.HexColor("#5f6b7a"))
        canvas.drawString(20 * mm, A4[1] - 12 * mm, f"Northwind Cloud · {title}")
        canvas.drawString(20 * mm, 11 * mm, footer)
        canvas.drawRightString(A4[0] - 20 * mm, 11 * mm, f"Page {d.page}")
        canvas.restoreState()

    doc.build(story, onFirstPage=decorate, onLaterPages=decorate)


# --------------------------------------------------------------------------------------
# DOCX rendering
# --------------------------------------------------------------------------------------


def build_docx(path: Path, blocks: list[tuple], title: str, author: str) -> None:
    doc = Document()
    normal = doc.styles["Normal"]
    normal.font.name = "Calibri"
    normal.font.size = Pt(10.5)
    for block in blocks:
        kind = block[0]
        if kind == "h1":
            doc.add_heading(block[1], level=0)
        elif kind == "h2":
            doc.add_heading(block[1], level=1)
        elif kind == "h3":
            doc.add_heading(block[1], level=2)
        elif kind == "p":
            doc.add_paragraph(block[1])
        elif kind == "ul":
            for item in block[1]:
                doc.add_paragraph(item, style="List Bullet")
        elif kind == "ol":
            for item in block[1]:
                doc.add_paragraph(item, style="List Number")
        elif kind == "table":
            rows = block[1]
            table = doc.add_table(rows=len(rows), cols=len(rows[0]))
            table.style = "Light Grid Accent 1"
            for r, row in enumerate(rows):
                for c, text in enumerate(row):
                    cell = table.cell(r, c)
                    cell.text = text
                    if r == 0:
                        for run in cell.paragraphs[0].runs:
                            run.bold = True
            doc.add_paragraph()
        else:  # pragma: no cover - content error
            raise ValueError(kind)
    footer = doc.sections[0].footer.paragraphs[0]
    footer.text = f"Northwind Cloud · {title} · Internal"
    footer.alignment = WD_ALIGN_PARAGRAPH.CENTER
    for run in footer.runs:
        run.font.size = Pt(8)
        run.font.color.rgb = RGBColor(0x5F, 0x6B, 0x7A)

    props = doc.core_properties
    props.title = title
    props.author = author
    props.last_modified_by = author
    props.created = FIXED_TIME
    props.modified = FIXED_TIME
    props.revision = 1
    props.comments = ""

    buf = io.BytesIO()
    doc.save(buf)
    _normalise_zip(buf.getvalue(), path)


def _normalise_zip(data: bytes, path: Path) -> None:
    """Rewrite the package with fixed timestamps so reruns are byte-identical."""
    src = zipfile.ZipFile(io.BytesIO(data))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as dst:
        for info in src.infolist():
            zi = zipfile.ZipInfo(info.filename, date_time=ZIP_TIME)
            zi.compress_type = zipfile.ZIP_DEFLATED
            zi.external_attr = 0o644 << 16
            dst.writestr(zi, src.read(info.filename))
    path.write_bytes(out.getvalue())


def main() -> None:
    build_pdf(
        ROOT / "hr" / "salary-bands.pdf",
        SALARY_BANDS,
        "Salary Bands 2026",
        "Strictly confidential – People Operations only",
    )
    build_pdf(
        ROOT / "finance" / "expense-policy-contractors.pdf",
        CONTRACTOR_EXPENSES,
        "Expense Policy for Contractors",
        "Finance · for contractors and engaging managers",
    )
    build_pdf(
        ROOT / "managers" / "performance-review-guide.pdf",
        PERFORMANCE_REVIEW,
        "Performance Review Guide for Managers",
        "Confidential – people managers only",
    )
    build_docx(
        ROOT / "hr" / "benefits-overview.docx",
        BENEFITS,
        "Benefits Overview 2026",
        "People Operations",
    )
    build_docx(
        ROOT / "it" / "vpn-setup.docx", VPN_SETUP, "VPN Setup Guide (WireGuard)", "IT Services"
    )
    for p in sorted(ROOT.rglob("*")):
        if p.suffix in (".pdf", ".docx"):
            print(f"{p.relative_to(ROOT)}  {p.stat().st_size:>7} bytes")


if __name__ == "__main__":
    main()
